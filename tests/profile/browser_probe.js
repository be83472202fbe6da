// Injected by test_report.sh into a copy of a report (never into the
// page smelt writes): after the page loads, it checks what a reader
// would see and writes the findings as JSON into <pre id="probe">, which
// `chromium --headless --dump-dom` prints. The error hook is injected at
// the top of <head>, so errors of the page's own script are caught.
window.addEventListener('load', function () {
  var out = {errors: window.__errs, svgs: [], sort: [], pager: null,
             link: null, load_ms: performance.now()};
  // every graph page shown in turn: each SVG must have a size
  document.querySelectorAll('.page').forEach(function (p) { p.hidden = false; });
  document.querySelectorAll('svg').forEach(function (s) {
    var r = s.getBoundingClientRect();
    out.svgs.push({id: s.id || (s.parentNode && s.parentNode.id) || '',
                   w: r.width, h: r.height});
  });
  document.querySelectorAll('.page').forEach(function (p, i) {
    p.hidden = p.id.slice(-3) !== '-p1';
  });
  // clicking headers sorts the table: a numeric and a text column,
  // ascending then descending
  var ths = document.querySelectorAll('#prof thead th');
  function column(i) {
    return Array.prototype.map.call(
      document.querySelectorAll('#prof tbody tr'),
      function (r) { return r.cells[i].textContent; });
  }
  function sorted(v, num, asc) {
    for (var k = 1; k < v.length; k++) {
      var a = num ? parseFloat(v[k - 1]) : v[k - 1];
      var b = num ? parseFloat(v[k]) : v[k];
      var c = num ? a - b : a.localeCompare(b);
      if (asc ? c > 0 : c < 0) return false;
    }
    return true;
  }
  [[4, true], [0, false]].forEach(function (t) {
    ths[t[0]].click();
    var up = sorted(column(t[0]), t[1], true);
    ths[t[0]].click();
    var down = sorted(column(t[0]), t[1], false);
    out.sort.push({column: ths[t[0]].textContent, asc: up, desc: down,
                   rows: column(t[0]).length});
  });
  // the pager of the first paged graph, if any
  var next = document.querySelector('.pager button[data-d="1"]');
  if (next) {
    var set = next.dataset.set;
    next.click();
    var shown = document.querySelectorAll('#' + set + ' .page:not([hidden])');
    out.pager = {set: set, shown: shown.length ? shown[0].id : ''};
  }
  // a graph node with a profile row: clicking it marks the row
  var nodes = document.querySelectorAll('g.node[data-node]');
  for (var i = 0; i < nodes.length && !out.link; i++) {
    var name = nodes[i].getAttribute('data-node');
    if (!document.querySelector('tr[data-node="' + CSS.escape(name) + '"]'))
      continue;
    nodes[i].dispatchEvent(new MouseEvent('click', {bubbles: true}));
    var hl = document.querySelector('tr.hl');
    out.link = {node: name, row: hl ? hl.getAttribute('data-node') : null};
  }
  var pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
