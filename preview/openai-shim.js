// GiftGenius preview: window.openai for a widget in a sandboxed (opaque-origin) iframe.
// Served by the preview only, injected into the served copy of the widget, never into the
// artifact. Every call goes to the host page (window.parent) over postMessage; the host page
// answers from the real MCP server. Mirrors the Apps SDK surface the widget uses.
(function () {
  "use strict";
  if (window.openai) return;
  var TAG = "giftgenius-preview/openai";
  var seq = 0;
  var pending = {};
  function post(msg) {
    msg.tag = TAG;
    window.parent.postMessage(msg, "*");
  }
  function request(kind, payload) {
    var id = ++seq;
    return new Promise(function (resolve, reject) {
      pending[id] = { resolve: resolve, reject: reject };
      post({ kind: kind, id: id, payload: payload === undefined ? null : payload });
    });
  }
  var openai = {
    toolInput: null,
    toolOutput: null,
    toolResponseMetadata: null,
    widgetState: null,
    theme: "light",
    locale: "en-US",
    displayMode: "inline",
    maxHeight: 640,
    userAgent: { device: { type: "desktop" }, capabilities: { hover: true, touch: false } },
    safeArea: { insets: { top: 0, bottom: 0, left: 0, right: 0 } },
    callTool: function (name, args) {
      return request("callTool", { name: String(name), arguments: args || {} });
    },
    setWidgetState: function (state) {
      openai.widgetState = state;
      return request("setWidgetState", { state: state });
    },
    sendFollowUpMessage: function (args) {
      return request("sendFollowUpMessage", args || {});
    },
    openExternal: function (args) {
      return request("openExternal", args || {});
    },
    requestDisplayMode: function (args) {
      return request("requestDisplayMode", args || {});
    }
  };
  // The preview host offers its emulated payment sheet when asked (?sheet=1 on this frame).
  if (/[?&]sheet=1(&|$)/.test(location.search)) {
    openai.requestCheckout = function (session) {
      return request("requestCheckout", session);
    };
  }
  window.openai = openai;
  window.addEventListener("message", function (event) {
    if (event.source !== window.parent) return;
    var msg = event.data;
    if (!msg || msg.tag !== TAG) return;
    if (msg.kind === "set_globals") {
      var globals = msg.globals || {};
      for (var key in globals) {
        if (Object.prototype.hasOwnProperty.call(globals, key)) openai[key] = globals[key];
      }
      window.dispatchEvent(new CustomEvent("openai:set_globals", { detail: { globals: globals } }));
    } else if (msg.kind === "reply") {
      var p = pending[msg.id];
      if (!p) return;
      delete pending[msg.id];
      if (msg.error) p.reject(new Error(String(msg.error)));
      else p.resolve(msg.result);
    }
  });
  post({ kind: "ready", id: 0, payload: null });
})();
