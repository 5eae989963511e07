// Draws a node's neighbourhood from the JSON the page carries (text only: cytoscape
// paints names on a canvas, so an agent's markup is never parsed).
(function () {
  "use strict";
  var holder = document.getElementById("graph");
  var data = document.getElementById("graph-data");
  if (!holder || !data || typeof cytoscape !== "function") { return; }
  var elements = JSON.parse(data.textContent);
  var cy = cytoscape({
    container: holder,
    elements: elements.nodes.concat(elements.edges),
    // the page's node in the middle, its neighbours around it, far enough apart that a
    // relationship's type sits clear of the names at its ends (and the same every time)
    layout: {
      name: "concentric", animate: false, minNodeSpacing: 110, padding: 20,
      concentric: function (node) { return node.data("center") ? 2 : 1; },
      levelWidth: function () { return 1; }
    },
    style: [
      { selector: "node", style: { "label": "data(name)", "font-size": 10, "background-color": "#1f5fbf", "text-wrap": "ellipsis", "text-max-width": 140, "text-valign": "bottom", "text-margin-y": 4 } },
      { selector: "edge", style: { "label": "data(name)", "font-size": 8, "curve-style": "bezier", "target-arrow-shape": "triangle", "width": 1.5, "text-rotation": "autorotate", "text-background-color": "#fff", "text-background-opacity": 0.9, "text-background-padding": 2 } }
    ]
  });
  holder.cy = cy;  // the drawing, for whoever reads it back (the browser tests)
  // a node opens its page; an edge, the event that wrote it (its provenance)
  cy.on("tap", "node, edge", function (event) {
    var href = event.target.data("href");
    if (typeof href === "string" && href.indexOf("/desk/") === 0) { window.location.assign(href); }
  });
})();
