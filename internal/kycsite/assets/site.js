// The wallet verification page: asks the browser's wallet (EIP-1193) for its account, gets a
// Sign-In with Ethereum message for it from the site, has the wallet sign it (personal_sign)
// and sends the signature back. Served as a file: the page's CSP allows no inline script.
"use strict";
(function () {
  var app = document.getElementById("app");
  if (!app) { return; }
  var button = document.getElementById("connect");
  var status = document.getElementById("status");
  var shown = document.getElementById("message");
  var link = app.dataset.link;

  function say(text) { status.textContent = text; }

  function post(path, body) {
    return fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
      credentials: "omit"
    }).then(function (resp) {
      return resp.json().then(function (data) {
        if (!resp.ok) { throw new Error(data.error || ("the site answered " + resp.status)); }
        return data;
      });
    });
  }

  function utf8Hex(text) {
    var bytes = new TextEncoder().encode(text), hex = "0x";
    for (var i = 0; i < bytes.length; i++) { hex += bytes[i].toString(16).padStart(2, "0"); }
    return hex;
  }

  button.addEventListener("click", function () {
    var eth = window.ethereum;
    if (!eth || typeof eth.request !== "function") {
      say("No browser wallet was found. Open this page in a browser with an Ethereum wallet.");
      return;
    }
    button.disabled = true;
    var address;
    eth.request({ method: "eth_requestAccounts" }).then(function (accounts) {
      address = accounts[0];
      say("Getting the message to sign...");
      return post("/api/challenge", { link: link, address: address });
    }).then(function (data) {
      shown.textContent = data.message;
      shown.hidden = false;
      say("Check the message in your wallet and sign it.");
      return eth.request({ method: "personal_sign", params: [utf8Hex(data.message), address] }).then(function (signature) {
        return post("/api/proof", { link: link, message: data.message, signature: signature });
      });
    }).then(function (result) {
      if (result.next) {
        say("Wallet " + result.wallet + " proven. Continuing to the identity check...");
        window.location.assign(result.next);
        return;
      }
      say("Wallet " + result.wallet + " proven for account " + result.account +
        (result.kyc_verified ? "; it is verified." : "."));
    }).catch(function (err) {
      say("Not verified: " + (err && err.message ? err.message : err));
      button.disabled = false;
    });
  });
}());
