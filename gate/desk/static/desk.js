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
    layout: { name: "cose", animate: false },
    style: [
      { selector: "node", style: { "label": "data(name)", "font-size": 10, "background-color": "#1f5fbf", "text-wrap": "ellipsis", "text-max-width": 140 } },
      { selector: "edge", style: { "label": "data(name)", "font-size": 8, "curve-style": "bezier", "target-arrow-shape": "triangle", "width": 1.5 } }
    ]
  });
  // a node opens its page; an edge, the event that wrote it (its provenance)
  cy.on("tap", "node, edge", function (event) {
    var href = event.target.data("href");
    if (typeof href === "string" && href.indexOf("/desk/") === 0) { window.location.assign(href); }
  });
})();
