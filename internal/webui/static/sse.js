// @ts-check
// Server-Sent Events over fetch: EventSource cannot send the Authorization
// header the API needs, so the stream is read and parsed here. Whatever ends
// the connection short of the run's "end" (a network error, the server
// restarting, a page too slow that was cut), the stream is opened again from
// the sequence number after the last event received: the server replays from
// there, and no answer, vote or final answer is lost or seen twice.

/**
 * parseSSE feeds text chunks and calls onMessage for each complete event.
 * @param {(m: {id: string, event: string, data: string}) => void} onMessage
 */
export function sseParser(onMessage) {
  let buf = '';
  let id = '';
  let ev = '';
  /** @type {string[]} */
  let data = [];
  /** @param {string} chunk */
  return (chunk) => {
    buf += chunk;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      let line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line === '') {
        if (data.length || ev) onMessage({ id, event: ev || 'message', data: data.join('\n') });
        id = '';
        ev = '';
        data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const c = line.indexOf(':');
      const field = c < 0 ? line : line.slice(0, c);
      let value = c < 0 ? '' : line.slice(c + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'id') id = value;
      else if (field === 'event') ev = value;
      else if (field === 'data') data.push(value);
    }
  };
}

/**
 * follow reads a run's events until its "end" (or stop()), reconnecting from
 * the last sequence number seen. onEvent gets each record; onState is told
 * "live", "reconnecting" or "ended".
 * @param {{url: string, token: () => string, from?: number,
 *   onEvent: (rec: any) => void, onState?: (s: string, detail?: string) => void,
 *   onUnauthorized?: () => void}} o
 */
export function follow(o) {
  let next = o.from || 1;
  let stopped = false;
  /** @type {AbortController | null} */
  let ctl = null;
  const state = o.onState || (() => {});
  const run = async () => {
    let backoff = 250;
    while (!stopped) {
      ctl = new AbortController();
      let ended = false;
      let fatal = false;
      /** @type {number | null} */
      let resume = null;
      try {
        const sep = o.url.includes('?') ? '&' : '?';
        const resp = await fetch(`${o.url}${sep}from=${next}`, {
          headers: { Authorization: 'Bearer ' + o.token(), Accept: 'text/event-stream' },
          signal: ctl.signal,
          cache: 'no-store',
        });
        if (resp.status === 401) {
          stopped = true;
          if (o.onUnauthorized) o.onUnauthorized();
          return;
        }
        if (resp.status === 503) {
          state('starting');
          await sleep(Number(resp.headers.get('Retry-After') || 1) * 1000);
          continue;
        }
        if (!resp.ok || !resp.body) {
          const text = await resp.text();
          state('error', text);
          stopped = true;
          return;
        }
        state('live');
        backoff = 250;
        const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
        const parse = sseParser((m) => {
          if (m.event === 'end') {
            ended = true;
            return;
          }
          if (m.event === 'error') {
            try {
              const e = JSON.parse(m.data);
              if (typeof e.resume_from === 'number') resume = e.resume_from;
              else {
                fatal = true;
                state('error', e.message || 'error');
              }
            } catch {
              fatal = true;
              state('error', m.data);
            }
            return;
          }
          let rec;
          try {
            rec = JSON.parse(m.data);
          } catch {
            return;
          }
          const seq = Number(m.id || rec.seq || 0);
          if (seq >= next) next = seq + 1;
          o.onEvent(rec);
        });
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          parse(value);
          if (ended || stopped || fatal) break;
        }
        if (fatal) {
          stopped = true;
          ctl.abort();
          return;
        }
        if (ended) {
          stopped = true;
          state('ended');
          ctl.abort();
          return;
        }
        if (resume !== null) {
          next = Math.max(next, resume);
          continue;
        }
      } catch (err) {
        if (stopped) return;
      }
      if (stopped) return;
      state('reconnecting');
      await sleep(backoff);
      backoff = Math.min(backoff * 2, 5000);
    }
  };
  run();
  return {
    stop() {
      stopped = true;
      if (ctl) ctl.abort();
    },
    /** the next sequence number asked for */
    get next() {
      return next;
    },
  };
}

/** @param {number} ms */
function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}
