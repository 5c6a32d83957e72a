// Starts madmax's views module (the app with every view, src/ui/handover.rs) once its glue,
// madmax-views.js, has run: the page's module adds this script after that one.
wasm_bindgen('./madmax-views_bg.wasm').catch((e) => {
  const note = document.querySelector('#loading .loading-note');
  if (note) note.textContent = `This part of madmax could not be started (${e}). Reload the page.`;
});
