// The farm page's only script: a filter box and sortable columns (rows stay in their group).
(function () {
  var box = document.getElementById("filter"), table = document.getElementById("capsules");
  if (!table) { return; }
  var bodies = Array.prototype.slice.call(table.tBodies);
  function rows(body) { return Array.prototype.slice.call(body.rows).filter(function (r) { return r.dataset.capsule !== undefined; }); }
  if (box) {
    box.addEventListener("input", function () {
      var want = box.value.toLowerCase();
      bodies.forEach(function (body) {
        rows(body).forEach(function (r) { r.hidden = want !== "" && r.textContent.toLowerCase().indexOf(want) < 0; });
      });
    });
  }
  Array.prototype.forEach.call(table.tHead.querySelectorAll("th[data-sort]"), function (th) {
    th.addEventListener("click", function () {
      var col = +th.dataset.sort, up = th.dataset.dir !== "up";
      th.dataset.dir = up ? "up" : "down";
      bodies.forEach(function (body) {
        rows(body).sort(function (a, b) {
          var x = a.cells[col].dataset.key || "", y = b.cells[col].dataset.key || "";
          return (x < y ? -1 : x > y ? 1 : 0) * (up ? 1 : -1);
        }).forEach(function (r) { body.appendChild(r); });
      });
    });
  });
})();
