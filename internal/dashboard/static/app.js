// The dashboard's one script, served from the dashboard's origin under a CSP without inline
// scripts. It copies a new key and gives the pages that call the REST API a browser token.
"use strict";

document.addEventListener("click", function (ev) {
  var btn = ev.target.closest("button[data-copy]");
  if (!btn) return;
  var field = document.getElementById(btn.getAttribute("data-copy"));
  if (!field) return;
  navigator.clipboard.writeText(field.value).then(function () {
    btn.textContent = "Copied";
  }, function () {
    field.select();
  });
});

// payoutAPI calls the REST API as the signed-in user: a short-lived token from
// POST token (with the page's CSRF token), kept in memory only, renewed before it expires.
var payoutAPI = (function () {
  var token = null, expires = 0;
  function csrf() {
    var m = document.querySelector('meta[name="csrf-token"]');
    return m ? m.getAttribute("content") : "";
  }
  function fresh() {
    if (token && Date.now() < expires - 30000) return Promise.resolve(token);
    return fetch("token", { method: "POST", headers: { "X-CSRF-Token": csrf() }, credentials: "same-origin" })
      .then(function (r) { if (!r.ok) throw new Error("signed out"); return r.json(); })
      .then(function (b) { token = b.token; expires = Date.parse(b.expiresAt); return token; });
  }
  return function (path, init) {
    init = init || {};
    return fresh().then(function (t) {
      init.headers = Object.assign({}, init.headers, { Authorization: "Bearer " + t });
      return fetch(path, init);
    });
  };
})();
window.payoutAPI = payoutAPI;

// A recipient form's refresh-on-change fields (spec 4.3): when one changes, the form is sent
// with its refresh button, and the server answers the form the API's requirements give for the
// details so far. Without the script the user presses that button.
document.addEventListener("change", function (ev) {
  var field = ev.target;
  if (!field.hasAttribute || !field.hasAttribute("data-refresh") || !field.form) return;
  var btn = field.form.querySelector('button[name="action"][value="refresh"]');
  if (btn) field.form.requestSubmit(btn);
});
