// The workflow diagram keeps its natural size: where it is wider than its box (on a
// phone) the box scrolls, and this brings the record's current step into its middle.
"use strict";
window.addEventListener("load", () => {
  for (const box of document.querySelectorAll(".workflow-diagram-box")) {
    const current = box.querySelector("svg.workflow-diagram g.current");
    if (!current) continue;
    const step = current.getBoundingClientRect();
    const area = box.getBoundingClientRect();
    box.scrollLeft += step.left + step.width / 2 - (area.left + box.clientWidth / 2);
  }
});
