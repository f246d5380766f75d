// api.js - the only place that talks to locklab-server.  Every failure
// becomes an ApiError carrying the HTTP status and the server's own
// {"error", "detail"} words, so that pages can show them verbatim.

export class ApiError extends Error {
  constructor(status, error, detail, path) {
    super(detail ? `${error}: ${detail}` : error);
    this.status = status;   // 0 when the server could not be reached
    this.error = error;     // the server's short code, e.g. "not-a-patch"
    this.detail = detail;   // the server's reason, verbatim
    this.path = path;
  }
}

async function request(path, opts = {}) {
  let res;
  try {
    res = await fetch(path, { cache: 'no-store', ...opts });
  } catch (e) {
    throw new ApiError(0, 'unreachable', `cannot reach the server (${e.message})`, path);
  }
  if (res.ok) return res;
  const text = await res.text();
  let error = `http-${res.status}`;
  let detail = text.trim() || res.statusText;
  try {
    const doc = JSON.parse(text);
    if (doc && typeof doc.error === 'string') {
      error = doc.error;
      detail = typeof doc.detail === 'string' ? doc.detail : '';
    }
  } catch { /* not JSON: keep the text */ }
  throw new ApiError(res.status, error, detail, path);
}

/* GET (or opts) a JSON document. */
export async function getJSON(path, opts) {
  const res = await request(path, opts);
  try {
    return await res.json();
  } catch (e) {
    throw new ApiError(res.status, 'bad-reply', `the reply of ${path} is not JSON (${e.message})`, path);
  }
}

/* GET a text/plain (or message/rfc822) body. */
export async function getText(path) {
  const res = await request(path);
  return res.text();
}

/* POST a JSON body; resolves to {status, body}. */
export async function postJSON(path, body) {
  const res = await request(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/* PATCH a JSON body with an admin's bearer token; resolves to the reply. */
export async function patchJSON(path, body, token) {
  const res = await request(path, {
    method: 'PATCH',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  return res.json();
}
