// A stand-in for htmx, for the browser tests only: the project ships no htmx (a page
// brings its own), and the tests run offline. It does what the tags' forms ask of htmx:
// on submit of a form with hx-post, post it with the HX-Request header, and put a
// successful answer in place of the element hx-target names ("closest <selector>"),
// as hx-swap="outerHTML" does. Each swap counts in <body data-swaps>.
(function () {
  if (window.workflowHtmxImitation) return;
  window.workflowHtmxImitation = true;
  document.addEventListener("submit", async function (event) {
    const form = event.target.closest("form[hx-post]");
    if (!form) return;
    event.preventDefault();
    const response = await fetch(form.getAttribute("hx-post"), {
      method: "POST",
      body: new FormData(form, event.submitter),
      headers: { "HX-Request": "true" },
      credentials: "same-origin",
    });
    if (!response.ok) return;
    const target = form.closest(form.getAttribute("hx-target").replace(/^closest /, ""));
    target.outerHTML = await response.text();
    document.body.dataset.swaps = String(Number(document.body.dataset.swaps || 0) + 1);
  });
})();
