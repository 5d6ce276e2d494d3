// The approval page's one script (served from /approve/passkey.js; the CSP runs no other and
// nothing inline). It asks the browser for a passkey with the options the server put on the
// form, puts the authenticator's answer in the form, and submits it. The server checks
// everything; this only carries bytes. On the inbox it reads the same page again every few
// seconds and puts the fresh list in place (without it, the page reloads itself).
"use strict";
(function () {
  function b64(buffer) {
    let text = "";
    for (const byte of new Uint8Array(buffer)) text += String.fromCharCode(byte);
    return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  function bytes(text) {
    const plain = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    return Uint8Array.from(plain, (c) => c.charCodeAt(0));
  }
  function ids(list) {
    return (list || []).map((c) => Object.assign({}, c, { id: bytes(c.id) }));
  }
  async function approve(form) {
    const options = JSON.parse(form.dataset.passkeyRequest).publicKey;
    options.challenge = bytes(options.challenge);
    options.allowCredentials = ids(options.allowCredentials);
    const credential = await navigator.credentials.get({ publicKey: options });
    const r = credential.response;
    form.elements.assertion.value = JSON.stringify({
      id: credential.id,
      rawId: b64(credential.rawId),
      type: credential.type,
      response: {
        authenticatorData: b64(r.authenticatorData),
        clientDataJSON: b64(r.clientDataJSON),
        signature: b64(r.signature),
        userHandle: r.userHandle ? b64(r.userHandle) : null,
      },
    });
  }
  async function enroll(form) {
    const options = JSON.parse(form.dataset.passkeyCreate).publicKey;
    options.challenge = bytes(options.challenge);
    options.user.id = bytes(options.user.id);
    options.excludeCredentials = ids(options.excludeCredentials);
    const credential = await navigator.credentials.create({ publicKey: options });
    const r = credential.response;
    form.elements.credential.value = JSON.stringify({
      id: credential.id,
      rawId: b64(credential.rawId),
      type: credential.type,
      response: {
        attestationObject: b64(r.attestationObject),
        clientDataJSON: b64(r.clientDataJSON),
      },
    });
  }
  for (const form of document.querySelectorAll("form[data-passkey-request], form[data-passkey-create]")) {
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const status = document.getElementById("passkey-status");
      const ask = form.dataset.passkeyRequest ? approve : enroll;
      if (status) status.textContent = "Waiting for your authenticator...";
      ask(form).then(
        () => form.submit(),
        (e) => {
          if (status) status.textContent = "Your passkey was not used: " + e.name + ": " + e.message;
        },
      );
    });
  }
  const inbox = document.getElementById("inbox");
  if (inbox) {
    const every = Number(inbox.dataset.refreshMs) || 5000;
    const update = async () => {
      try {
        const answer = await fetch(location.href, { credentials: "same-origin", cache: "no-store" });
        const fresh = answer.ok
          ? new DOMParser().parseFromString(await answer.text(), "text/html").getElementById("inbox")
          : null;
        // signed out meanwhile, or the store away: the list stays as it was, marked stale
        if (fresh) inbox.replaceChildren(...fresh.childNodes);
        else inbox.dataset.stale = "true";
      } catch (e) {
        inbox.dataset.stale = "true";
      }
      setTimeout(update, every);
    };
    setTimeout(update, every);
  }
})();
