// The approval page's one script (served from /approve/passkey.js; the CSP runs no other and
// nothing inline). It asks the browser for a passkey with the options the server put on the
// form, puts the authenticator's answer in the form, and submits it. The server checks
// everything; this only carries bytes. On the inbox and on a request's page it reads the same
// page again every few seconds and puts what changed in place (without it, the page reloads itself).
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
    // a comment is signed with the request: the server says the challenge that covers both
    const comment = form.elements.reason ? form.elements.reason.value.trim() : "";
    if (comment) {
      const asked = new URLSearchParams({ reason: comment });
      if (form.elements.csrf) asked.set("csrf", form.elements.csrf.value);
      const answer = await fetch(form.action + "/challenge", {
        method: "POST",
        credentials: "same-origin",
        body: asked,
      });
      if (!answer.ok) throw new Error("the page did not give the challenge for your comment (" + answer.status + ")");
      options.challenge = (await answer.json()).challenge;
    }
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
  // a decline needs a reason: said here before the round trip (the server refuses one without)
  const decision = document.getElementById("decision-form");
  if (decision) {
    decision.addEventListener("submit", (event) => {
      const reason = decision.elements.reason;
      if (event.submitter && event.submitter.value === "decline" && reason && !reason.value.trim()) {
        event.preventDefault();
        event.stopImmediatePropagation();
        reason.setAttribute("aria-invalid", "true");
        reason.focus();
        const status = document.getElementById("decision-status");
        if (status) status.textContent = "Say why you decline: the proposer and the agent will read it.";
      }
    });
  }
  for (const form of document.querySelectorAll("form[data-passkey-request], form[data-passkey-create]")) {
    form.addEventListener("submit", (event) => {
      // only Approve takes the passkey; Decline goes as it is
      if (form.dataset.passkeyRequest && event.submitter && event.submitter.value !== "approve") return;
      event.preventDefault();
      const status = document.getElementById("passkey-status");
      const ask = form.dataset.passkeyRequest ? approve : enroll;
      if (status) status.textContent = "Waiting for your authenticator...";
      ask(form).then(
        () => {
          if (form.dataset.passkeyRequest) {
            // form.submit() sends no button: the decision rides in a field of its own
            const chosen = document.createElement("input");
            chosen.type = "hidden";
            chosen.name = "decision";
            chosen.value = "approve";
            form.appendChild(chosen);
          }
          form.submit();
        },
        (e) => {
          if (status) status.textContent = "Your passkey was not used: " + e.name + ": " + e.message;
        },
      );
    });
  }
  // a request's page follows the request: when it moves on (decided here or elsewhere, collected,
  // created, expired), what it says is put in place, and the decision goes once it is made
  const live = document.getElementById("live");
  if (live && live.dataset.final !== "true") {
    const every = Number(live.dataset.refreshMs) || 5000;
    const follow = async () => {
      try {
        const answer = await fetch(location.href, { credentials: "same-origin", cache: "no-store" });
        const fresh = answer.ok ? new DOMParser().parseFromString(await answer.text(), "text/html") : null;
        const now = fresh && fresh.getElementById("live");
        if (now && now.dataset.state !== live.dataset.state) {
          live.replaceChildren(...now.childNodes);
          live.dataset.state = now.dataset.state;
          live.dataset.final = now.dataset.final;
          const deciding = document.getElementById("decide");
          if (deciding && !fresh.getElementById("decide")) deciding.remove();
          const h1 = document.querySelector("h1");
          const title = fresh.querySelector("h1");
          if (h1 && title) h1.textContent = title.textContent;
        }
        const left = document.getElementById("time-left");
        const leftNow = fresh && fresh.getElementById("time-left");
        if (left) left.textContent = leftNow ? leftNow.textContent : "";
      } catch (e) {
        live.dataset.stale = "true";
      }
      if (live.dataset.final !== "true") setTimeout(follow, every);
    };
    setTimeout(follow, every);
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
