//! What a chart has under the pointer: the drawing records where it put each point or bar (CSS
//! pixels of the canvas, in the order of its data) and these find the one at the pointer; and
//! which of a chart's point labels fit without overlapping.

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

/// A label's box on the canvas, in device pixels: top-left corner, width and height.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LabelBox {
    pub x: i32,
    pub y: i32,
    pub w: i32,
    pub h: i32,
}

impl LabelBox {
    pub fn overlaps(&self, o: &LabelBox) -> bool {
        self.x < o.x + o.w && o.x < self.x + self.w && self.y < o.y + o.h && o.y < self.y + self.h
    }
}

/// Which labels to draw, by index into `boxes`: each in `order` unless it overlaps one drawn
/// before it (so the first in `order` always shows).
pub fn clear_labels(boxes: &[LabelBox], order: impl Iterator<Item = usize>) -> Vec<bool> {
    let mut shown = vec![false; boxes.len()];
    let mut drawn: Vec<LabelBox> = Vec::new();
    for i in order {
        let Some(b) = boxes.get(i) else { continue };
        if drawn.iter().all(|d| !d.overlaps(b)) {
            drawn.push(*b);
            shown[i] = true;
        }
    }
    shown
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

    #[test]
    fn labels_that_would_overlap_one_already_drawn_are_left_out() {
        let at = |x: i32, y: i32| LabelBox { x, y, w: 20, h: 11 };
        // Batches 1, 2 and 4 crowd one corner; 512 and 1,024 end the curve side by side.
        let boxes = [at(100, 200), at(105, 195), at(125, 185), at(300, 50), at(700, 20), at(710, 21)];
        assert_eq!(clear_labels(&boxes, 0..boxes.len()), [true, false, true, true, true, false]);
        // The first in the order always shows: the current batch before the others.
        assert_eq!(clear_labels(&boxes, [1, 0, 2, 3, 4, 5].into_iter()), [false, true, true, true, true, false]);
        // Apart, all show; edges that only touch do not overlap.
        let apart = [at(0, 0), at(20, 0), at(0, 11)];
        assert_eq!(clear_labels(&apart, 0..3), [true, true, true]);
        // An index past the boxes is ignored.
        assert_eq!(clear_labels(&apart, [7, 0].into_iter()), [true, false, false]);
    }
}
