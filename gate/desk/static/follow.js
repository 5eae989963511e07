// The log's last page follows the log: every few seconds it asks for the events after the
// last one shown (the audit_events tool's answer, as JSON) and appends them as rows. Every
// value goes in as text (textContent), never as markup.
(function () {
  "use strict";
  var table = document.getElementById("log");
  if (!table || !table.dataset.follow) { return; }
  var after = table.dataset.after || "0";
  var body = table.tBodies[0];
  function cell(row, text) { var td = row.insertCell(); td.textContent = text; return td; }
  function add(e) {
    var row = body.insertRow();
    var link = document.createElement("a");
    link.href = "/desk/event/" + String(e.seq);
    link.textContent = String(e.seq);
    row.insertCell().appendChild(link);
    cell(row, e.occurred_at);
    cell(row, e.type);
    cell(row, e.agent);
    var code = document.createElement("code");
    code.textContent = String(e.hash).slice(0, 12);
    row.insertCell().appendChild(code);
    row.className = "new";
  }
  function poll() {
    fetch(table.dataset.follow + "&cursor=" + encodeURIComponent(after), { credentials: "same-origin" })
      .then(function (answer) { return answer.ok ? answer.json() : null; })
      .then(function (page) {
        if (!page) { return; }
        page.events.forEach(add);
        if (page.events.length) { after = String(page.events[page.events.length - 1].seq); }
        window.setTimeout(poll, page.next_cursor ? 0 : 2000);
      })
      .catch(function () { window.setTimeout(poll, 5000); });
  }
  window.setTimeout(poll, 2000);
})();
