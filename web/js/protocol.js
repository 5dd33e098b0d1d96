// protocol.js: the animserver protocol over a WebSocket bridge (websockify).
//
// The bridge forwards the server's TCP bytes unchanged, so this speaks the
// ordinary protocol: varint-delimited Request / ServerMessage frames, encoded
// and decoded by protobufjs from proto/animserver.proto itself (fetched next
// to the page at start: no generated or hand-written decoder). A WebSocket
// message may carry part of a frame or several: bytes are buffered and frames
// cut with protobufjs's own varint reader. Requests are matched to responses
// by id (pipelining allowed); stream frames go to their subscription's
// handler. What this does not do: reconnect (session.js opens a new Connection
// when one is lost), or anything with the poses (quantized.js, kinematics.js).
/* global protobuf */

export class AnimError extends Error {
  constructor(code, codeName, message, kind) {
    super(`${kind}: ${codeName}: ${message}`);
    this.code = code;
    this.codeName = codeName;
    this.serverMessage = message;
  }
}

export async function loadProtocol(url = 'animserver.proto') {
  const root = new protobuf.Root();
  // Imports name paths from the proto folder (protoc's -Iproto), not from the
  // importing file: resolve them against the envelope file's folder.
  const base = url.slice(0, url.lastIndexOf('/') + 1);
  root.resolvePath = (origin, target) => (origin ? base + target : target);
  await root.load(url, { keepCase: true }); // field names as the proto spells them
  return {
    root,
    Request: root.lookupType('animserver.Request'),
    ServerMessage: root.lookupType('animserver.ServerMessage'),
    ErrorCode: root.lookupEnum('animserver.ErrorCode'),
    PoseEncoding: root.lookupEnum('animserver.PoseEncoding'),
    FeatureKind: root.lookupEnum('animserver.FeatureKind'),
    requestKinds: root.lookupType('animserver.Request').oneofs.body.oneof,
  };
}

const RECENT_KEPT = 40;

const key = (id) => (id == null ? '' : id.toString());

export class Connection {
  // url: ws://host:port/ of the bridge; proto: from loadProtocol.
  constructor(proto, url) {
    this.proto = proto;
    this.url = url;
    this.nextId = 1;
    this.pending = new Map(); // id -> {resolve, reject, kind}
    this.streams = new Map(); // subscription id (string) -> handler(StreamMessage)
    this.early = new Map(); // frames that arrived before their subscribe answer
    this.buffer = new Uint8Array(0);
    this.bytesIn = 0;
    this.bytesOut = 0;
    this.onclose = null;
    this.onstall = null; // (kind, ms): a call has waited stallMs for its answer (it goes on waiting)
    this.stallMs = 10000;
    // The last RECENT_KEPT requests (kind, ms sent, ms answered or the
    // error): what a test prints when the page did not do what it waited for.
    this.recent = [];
  }

  open(timeoutMs = 5000) {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(this.url, ['binary']);
      ws.binaryType = 'arraybuffer';
      const timer = setTimeout(() => { ws.close(); reject(new Error(`no bridge at ${this.url}`)); }, timeoutMs);
      ws.onopen = () => { clearTimeout(timer); resolve(this); };
      ws.onerror = () => { clearTimeout(timer); reject(new Error(`cannot reach ${this.url}`)); };
      ws.onclose = (e) => this.closed(e.reason || 'connection closed');
      ws.onmessage = (e) => this.received(new Uint8Array(e.data));
      this.ws = ws;
    });
  }

  close() { if (this.ws) this.ws.close(); }

  closed(reason) {
    for (const p of this.pending.values()) p.reject(new Error(`${p.kind}: ${reason}`));
    this.pending.clear();
    if (this.onclose) this.onclose(reason);
    this.onclose = null;
  }

  // Sends Request{id, kind: body}; resolves with the response body or rejects with an AnimError, or
  // with an Error once the connection is lost. No deadline: over TCP the server answers every
  // request or the connection closes (closed() rejects what is pending), and a deadline would only
  // guess at speed: on a busy machine a starved page takes seconds to read its answers (6 s
  // measured under two busy loops; over 10 s once in a test run at load 6.5, which failed the call and dropped its
  // answer), and websockify queues every stream frame ahead of an answer, without bound.
  // A call waiting longer than stallMs is reported once to onstall(kind, ms), and still waits.
  call(kind, body = {}) {
    if (!this.proto.requestKinds.includes(kind)) return Promise.reject(new Error(`no request named ${kind}`));
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return Promise.reject(new Error(`${kind}: not connected`));
    const id = this.nextId++;
    const message = this.proto.Request.fromObject({ id, [kind]: body });
    const bytes = this.proto.Request.encodeDelimited(message).finish();
    this.bytesOut += bytes.length;
    this.ws.send(bytes);
    const note = { id, kind, sent: Math.round(performance.now()), answered: null, error: null };
    this.recent.push(note);
    if (this.recent.length > RECENT_KEPT) this.recent.shift();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => { if (this.onstall) this.onstall(kind, this.stallMs); }, this.stallMs);
      this.pending.set(id, {
        kind,
        resolve: (v) => { clearTimeout(timer); note.answered = Math.round(performance.now()); resolve(v); },
        reject: (e) => { clearTimeout(timer); note.error = e.message; reject(e); },
      });
    });
  }

  // Frames of subscription `id` go to handler(StreamMessage) (including any that came first).
  onStream(id, handler) {
    const k = key(id);
    this.streams.set(k, handler);
    for (const m of this.early.get(k) || []) handler(m);
    this.early.delete(k);
  }

  offStream(id) { this.streams.delete(key(id)); }

  received(chunk) {
    this.bytesIn += chunk.length;
    let buf = this.buffer.length ? concat(this.buffer, chunk) : chunk;
    for (;;) {
      if (!buf.length) break;
      const reader = protobuf.Reader.create(buf);
      let length;
      try {
        length = reader.uint32(); // the frame's varint length
      } catch (e) {
        break; // the varint itself is incomplete
      }
      if (reader.pos + length > buf.length) break;
      const message = this.proto.ServerMessage.decode(buf.subarray(reader.pos, reader.pos + length));
      buf = buf.subarray(reader.pos + length);
      this.dispatch(message);
    }
    this.buffer = buf.length ? buf.slice() : new Uint8Array(0);
  }

  dispatch(message) {
    if (message.kind === 'stream') {
      const k = key(message.stream.subscription_id);
      const handler = this.streams.get(k);
      if (handler) handler(message.stream);
      else {
        const q = this.early.get(k) || [];
        if (q.length < 256) q.push(message.stream);
        this.early.set(k, q);
      }
      return;
    }
    const response = message.response;
    const id = Number(response.id.toString());
    const p = this.pending.get(id);
    if (!p) {
      if (response.error && response.error.code) console.warn('connection error', response.error.message);
      return;
    }
    this.pending.delete(id);
    if (response.error && response.error.code) {
      const name = this.proto.ErrorCode.valuesById[response.error.code] || `ERROR_${response.error.code}`;
      p.reject(new AnimError(response.error.code, name, response.error.message, p.kind));
    } else {
      p.resolve(response[response.body]);
    }
  }
}

function concat(a, b) {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
