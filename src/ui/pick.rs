//! What a chart has under the pointer: the drawing records where it put each point or bar (CSS
//! pixels of the canvas, in the order of its data) and these find the one at the pointer.

/// The index of the point of `placed` nearest to `(x, y)`, within `radius`.
pub fn nearest(placed: &[(f64, f64)], x: f64, y: f64, radius: f64) -> Option<usize> {
    placed
        .iter()
        .enumerate()
        .map(|(i, p)| (i, (p.0 - x).powi(2) + (p.1 - y).powi(2)))
        .filter(|(_, d2)| *d2 <= radius * radius)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
}

/// The index of the bar of `rects` (`[left, top, right, bottom]`) that holds `(x, y)`.
pub fn bar_at(rects: &[[f64; 4]], x: f64, y: f64) -> Option<usize> {
    rects.iter().position(|r| x >= r[0] && x <= r[2] && y >= r[1] && y <= r[3])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_point_within_reach_is_picked() {
        let placed = [(10.0, 10.0), (20.0, 10.0), (100.0, 100.0)];
        assert_eq!(nearest(&placed, 12.0, 11.0, 8.0), Some(0));
        assert_eq!(nearest(&placed, 17.0, 10.0, 8.0), Some(1));
        assert_eq!(nearest(&placed, 60.0, 60.0, 8.0), None);
        assert_eq!(nearest(&[], 0.0, 0.0, 8.0), None);
    }

    #[test]
    fn a_point_names_the_bar_it_is_on() {
        let rects = [[10.0, 0.0, 100.0, 20.0], [10.0, 22.0, 100.0, 42.0]];
        assert_eq!(bar_at(&rects, 50.0, 10.0), Some(0));
        assert_eq!(bar_at(&rects, 99.0, 30.0), Some(1));
        assert_eq!(bar_at(&rects, 50.0, 21.0), None, "between the bars");
        assert_eq!(bar_at(&rects, 5.0, 10.0), None, "left of them");
    }
}
