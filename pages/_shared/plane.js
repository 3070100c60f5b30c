// The Playground's plane drawn on a canvas from sblr.plots.playground.plane_payload: the
// surface as an image the browser smooths, the dashed cut, the points (a ring per class,
// held-out hollow), the legend, the colour bar. A click is marked at once, the plane it makes
// asked of the dashboard's route and drawn, then sent as the trigger "click" ({x, y,
// on_point}): the page's fragment reruns and sends the same plane. Everything
// drawn is numbers or text put on the canvas with fillText: nothing is read as markup.
// Streamlit calls this function again with every new payload; the canvas lives on.

const RANGE = 1.05; // the axes' range, ±
const MARGIN = { l: 44, t: 34, b: 64 }; // as the Plotly plane's (r: 64 with a colour bar)
const FONT = '"Source Sans Pro", "Open Sans", verdana, arial, sans-serif';
const INK = "#444444";

function rgb(hex) {
  const v = parseInt(hex.slice(1), 16);
  return [(v >> 16) & 255, (v >> 8) & 255, v & 255];
}

function layout(plane, width, height) {
  const s = plane.data.surface;
  const r = s && s.mode !== "region" ? 64 : 10;
  const side = Math.max(40, Math.min(width - MARGIN.l - r, height - MARGIN.t - MARGIN.b));
  const x0 = MARGIN.l + Math.max(0, (width - MARGIN.l - r - side) / 2);
  return { x0, y0: MARGIN.t, side, r, width, height };
}

const toPx = (L, x, y) => [
  L.x0 + ((x + RANGE) / (2 * RANGE)) * L.side,
  L.y0 + ((RANGE - y) / (2 * RANGE)) * L.side,
];
const toData = (L, px, py) => [
  ((px - L.x0) / L.side) * 2 * RANGE - RANGE,
  RANGE - ((py - L.y0) / L.side) * 2 * RANGE,
];

function surfaceImage(data) {
  // the grid as an n × n image (one pixel a grid value), row 0 the top (x₂ = 1)
  const s = data.surface;
  const n = s.n;
  const image = new ImageData(n, n);
  const colours = data.colours.map(rgb);
  const top = s.mode === "region" ? null : colours[s.k];
  const alpha = s.mode === "region" ? 0.35 : 0.55; // over white, as the Plotly plane's
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const v = s.z[i * n + j];
      const c = top || colours[v] || [255, 255, 255];
      const a = top ? alpha * v : alpha;
      const o = ((n - 1 - i) * n + j) * 4;
      image.data[o] = 255 + (c[0] - 255) * a;
      image.data[o + 1] = 255 + (c[1] - 255) * a;
      image.data[o + 2] = 255 + (c[2] - 255) * a;
      image.data[o + 3] = 255;
    }
  }
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = n;
  canvas.getContext("2d").putImageData(image, 0, 0);
  return canvas;
}

function disc(ctx, x, y, size, colour, hollow) {
  ctx.beginPath();
  ctx.arc(x, y, size / 2, 0, 2 * Math.PI);
  if (hollow) {
    ctx.lineWidth = 2.5;
    ctx.strokeStyle = colour;
    ctx.stroke();
  } else {
    ctx.fillStyle = colour;
    ctx.fill();
    ctx.lineWidth = 1;
    ctx.strokeStyle = "#ffffff";
    ctx.stroke();
  }
}

function draw(plane) {
  const { canvas, data } = plane;
  const ratio = window.devicePixelRatio || 1;
  const width = canvas.clientWidth;
  const height = canvas.clientHeight;
  if (!width || !height) return;
  canvas.width = Math.round(width * ratio);
  canvas.height = Math.round(height * ratio);
  const ctx = canvas.getContext("2d");
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.fillStyle = "#ffffff";
  ctx.fillRect(0, 0, width, height);
  const L = layout(plane, width, height);
  plane.layout = L;
  const parts = {}; // the boxes drawn (for the browser test: nothing outside the canvas)
  ctx.save();
  ctx.beginPath();
  ctx.rect(L.x0, L.y0, L.side, L.side);
  ctx.clip();
  const s = data.surface;
  if (s) {
    // pixel centres on the grid's values (-1 … 1): the image reaches half a cell beyond
    const half = 1 / (s.n - 1);
    const [ax, ay] = toPx(L, -1 - half, 1 + half);
    const [bx, by] = toPx(L, 1 + half, -1 - half);
    ctx.imageSmoothingEnabled = true;
    ctx.imageSmoothingQuality = "high";
    ctx.drawImage(plane.image || (plane.image = surfaceImage(data)), ax, ay, bx - ax, by - ay);
  }
  if (data.cut.length) {
    ctx.setLineDash([7, 4]);
    ctx.lineWidth = 2;
    ctx.strokeStyle = "#222222";
    ctx.beginPath();
    for (const line of data.cut) {
      for (let p = 0; p < line.length; p += 2) {
        const [x, y] = toPx(L, line[p], line[p + 1]);
        if (p) ctx.lineTo(x, y);
        else ctx.moveTo(x, y);
      }
    }
    ctx.stroke();
    ctx.setLineDash([]);
  }
  // the points: each combination's rings, outside in, training points then held-out ones
  const byCombo = data.combos.map(() => [[], []]);
  for (const p of data.points) byCombo[p[2]][p[3]].push(p);
  data.combos.forEach((combo, c) => {
    combo.classes.forEach((cls, ring) => {
      const size = data.size + data.ring * (combo.classes.length - 1 - ring);
      for (const hollow of [0, 1]) {
        for (const p of byCombo[c][hollow]) {
          const [x, y] = toPx(L, p[0], p[1]);
          disc(ctx, x, y, size, data.colours[cls], hollow);
        }
      }
    });
  });
  if (plane.pending) {
    // the click just made, until the new plane comes
    const [x, y] = toPx(L, plane.pending[0], plane.pending[1]);
    ctx.setLineDash([3, 3]);
    disc(ctx, x, y, data.size + 8, data.colours[data.place] || INK, true);
    ctx.setLineDash([]);
  }
  ctx.restore();
  ctx.strokeStyle = "#d0d0d0";
  ctx.lineWidth = 1;
  ctx.strokeRect(L.x0 + 0.5, L.y0 + 0.5, L.side - 1, L.side - 1);
  // ticks
  ctx.fillStyle = INK;
  ctx.font = `12px ${FONT}`;
  for (const v of [-1, -0.5, 0, 0.5, 1]) {
    const [x, y] = toPx(L, v, v);
    const label = String(v);
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    ctx.fillText(label, x, L.y0 + L.side + 4);
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    ctx.fillText(label, L.x0 - 5, y);
  }
  // the title
  ctx.font = `14px ${FONT}`;
  ctx.textAlign = "left";
  ctx.textBaseline = "middle";
  ctx.fillText(data.title, L.x0, MARGIN.t / 2, width - L.x0 - 4);
  parts.title = [L.x0, 0, Math.min(ctx.measureText(data.title).width, width - L.x0 - 4), 34];
  // the legend: a line per combination, at the foot, wrapping
  if (data.points.length) {
    ctx.font = `11px ${FONT}`;
    ctx.textBaseline = "middle";
    let x = L.x0;
    let y;
    const rows = [];
    const items = data.combos.map((combo) => {
      const w = 24 + ctx.measureText(combo.name).width + 12;
      return { combo, w };
    });
    let row = [];
    for (const item of items) {
      if (row.length && x + item.w > width - 4) {
        rows.push(row);
        row = [];
        x = L.x0;
      }
      row.push({ ...item, x });
      x += item.w;
    }
    rows.push(row);
    // under the tick labels, or at the foot if the rows would not fit there
    y = Math.min(L.y0 + L.side + 34, height - 12 - 16 * (rows.length - 1));
    const first = y;
    for (const line of rows) {
      for (const { combo, x: at } of line) {
        const n = combo.classes.length;
        combo.classes.forEach((cls, ring) => {
          disc(ctx, at + 10, y, 8 + 4 * (n - 1 - ring), data.colours[cls], false);
        });
        ctx.fillStyle = INK;
        ctx.fillText(combo.name, at + 24, y);
      }
      y += 16;
    }
    parts.legend = [L.x0, first - 10, width - L.x0, y - first + 4];
  }
  // the colour bar (π or f̄ of the class shown), right of the plane
  if (s && s.mode !== "region") {
    const bx = L.x0 + L.side + 12;
    const bh = L.side * 0.6;
    const by = L.y0;
    const c = rgb(data.colours[s.k]);
    const gradient = ctx.createLinearGradient(0, by + bh, 0, by);
    gradient.addColorStop(0, "#ffffff");
    gradient.addColorStop(
      1,
      `rgb(${c.map((v) => Math.round(255 + (v - 255) * 0.55)).join(",")})`,
    );
    ctx.fillStyle = gradient;
    ctx.fillRect(bx, by + 14, 12, bh - 14);
    ctx.strokeStyle = "#d0d0d0";
    ctx.strokeRect(bx + 0.5, by + 14.5, 11, bh - 15);
    ctx.fillStyle = INK;
    ctx.font = `12px ${FONT}`;
    ctx.textAlign = "left";
    ctx.textBaseline = "top";
    ctx.fillText(s.bar, bx, by);
    ctx.textBaseline = "middle";
    ctx.font = `11px ${FONT}`;
    const span = Math.abs(s.top - s.lo);
    const digits = span >= 10 ? 0 : span >= 1 ? 1 : 2;
    for (const f of [0, 0.5, 1]) {
      const v = s.lo + (s.top - s.lo) * f;
      const label = v === 0 ? "0" : v.toFixed(digits);
      ctx.fillText(label, bx + 16, by + bh - f * (bh - 14));
    }
    parts.colorbar = [bx, by, width - bx - 2, bh + 6];
  }
  plane.parts = parts;
  // what is drawn where, for the browser tests and the benchmark
  canvas.__parts = parts;
  canvas.__layout = L;
}

function pointAt(plane, px, py) {
  // the point under (px, py): the nearest whose outer ring holds it
  const L = plane.layout;
  const data = plane.data;
  let best = null;
  let bestD = Infinity;
  for (const p of data.points) {
    const [x, y] = toPx(L, p[0], p[1]);
    const size = data.size + data.ring * (data.combos[p[2]].classes.length - 1);
    const d = Math.hypot(x - px, y - py);
    if (d <= size / 2 + 2 && d < bestD) {
      best = p;
      bestD = d;
    }
  }
  return best;
}

function target(plane, event) {
  // what a click there means: a point (its own place) or the nearest cell's centre
  const box = plane.canvas.getBoundingClientRect();
  const px = event.clientX - box.left;
  const py = event.clientY - box.top;
  const L = plane.layout;
  if (!L || px < L.x0 || px > L.x0 + L.side || py < L.y0 || py > L.y0 + L.side) return null;
  const point = pointAt(plane, px, py);
  if (point) return { x: point[0], y: point[1], on_point: true, point };
  const step = 2 / (plane.data.cells - 1);
  const snap = (v) => Math.min(1, Math.max(-1, Math.round((v + 1) / step) * step - 1));
  const [x, y] = toData(L, px, py);
  return { x: snap(x), y: snap(y), on_point: false };
}

function hover(plane, event) {
  const where = target(plane, event);
  const tip = plane.tip;
  if (!where) {
    tip.style.display = "none";
    return;
  }
  const at = `(x₁ ${where.x.toFixed(2)}, x₂ ${where.y.toFixed(2)})`;
  tip.textContent = where.point
    ? `${plane.data.combos[where.point[2]].name} · ${where.point[3] ? "held out" : "training"} point ${at}`
    : `click: place here ${at}`;
  tip.style.display = "block";
  const box = plane.canvas.getBoundingClientRect();
  tip.style.left = `${Math.min(event.clientX - box.left + 12, box.width - 160)}px`;
  tip.style.top = `${event.clientY - box.top + 14}px`;
}

const PATIENCE_MS = 300; // a click's page run waits this long at most for the route's plane
const later = (ms) => new Promise((done) => setTimeout(done, ms));

async function ask(plane, click, n) {
  // The plane click n makes, from the dashboard's route (pages/_shared/routes.py), drawn at
  // once: the page's run that follows draws the same. Asked only on a board holding every
  // click before it (the page's plane of click n - 1, or the preview of it), and drawn only
  // if nothing came since; else, and without an answer in time or with a refusal, nothing is
  // drawn here (the page's run draws the click).
  const basis = plane.basis;
  if (!basis || !basis.url || !window.fetch || plane.basisSeq !== n - 1) return;
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), 1500);
  try {
    const { url, ...fields } = basis;
    // the route is under the page's own base path (a proxy's prefix included)
    const answer = await fetch(new URL(url, window.location.href), {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ ...fields, click }),
      signal: abort.signal,
      credentials: "same-origin",
    });
    if (!answer.ok) return;
    const out = await answer.json();
    plane.answered += 1; // for the browser tests: the route's planes, drawn or too late
    plane.canvas.__answer = out.plane;
    plane.canvas.dataset.answered = String(plane.answered);
    if (plane.basis !== basis) return; // the page's plane (or settings) came meanwhile
    const page = plane.data;
    plane.data = { ...out.plane, place: page.place, seq: page.seq, preview: null };
    plane.basis = { ...out.basis, url };
    plane.basisSeq = n;
    plane.image = null;
    plane.pending = null;
    draw(plane);
    plane.previewed += 1; // for the benchmark: the route's planes drawn
    plane.canvas.dataset.previewed = String(plane.previewed);
    plane.canvas.setAttribute("aria-label", out.plane.title);
  } catch (error) {
    // no answer (the server without the route, or too slow): the page's run draws the click
  } finally {
    clearTimeout(timer);
  }
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  let plane = parentElement.__sblrPlane;
  if (!plane) {
    const host = document.createElement("div");
    host.className = "sblr-plane";
    const canvas = document.createElement("canvas");
    canvas.className = "sblr-plane-canvas";
    canvas.setAttribute("role", "img");
    const tip = document.createElement("div");
    tip.className = "sblr-plane-tip";
    host.append(canvas, tip);
    parentElement.append(host);
    plane = parentElement.__sblrPlane = {
      canvas,
      tip,
      drawn: 0,
      previewed: 0,
      answered: 0,
      queue: Promise.resolve(),
      clicks: undefined, // clicks made on the page (the page's count at the first plane)
      queued: 0, // clicks not sent yet
      lastSent: -Infinity,
    };
    canvas.addEventListener("click", (event) => {
      const where = target(plane, event);
      if (!where) return;
      const click = { x: where.x, y: where.y, on_point: where.on_point };
      const n = ++plane.clicks;
      // asked at once when no click waits before it: the request leaves before the mark is
      // drawn (the canvas redrawn: a few ms of the main thread)
      const asking = plane.queued ? null : ask(plane, click, n);
      plane.queued += 1;
      plane.pending = [where.x, where.y]; // marked where it was made
      draw(plane);
      // the plane it makes asked of the server first and drawn, then the page's run, in the
      // order the clicks came (each asks on the board the one before made); an answer slower
      // than PATIENCE_MS no longer holds the run back (it is still drawn if it comes first).
      // (Asking both at once drew the plane later: p50 ~200 ms against ~100, the page's
      // React work at the run's start delaying the answer's drawing.)
      // Each click is its own message (a task of its own: Streamlit sends the trigger values
      // of one task together, and the page would keep only the last).
      plane.queue = plane.queue
        .then(() => Promise.race([asking || ask(plane, click, n), later(PATIENCE_MS)]))
        .then(() => later(0))
        .then(() => {
          plane.send("click", click);
          plane.lastSent = performance.now();
          plane.queued -= 1;
        });
    });
    canvas.addEventListener("mousemove", (event) => hover(plane, event));
    canvas.addEventListener("mouseleave", () => (tip.style.display = "none"));
    new ResizeObserver(() => draw(plane)).observe(canvas);
  }
  plane.send = setTriggerValue;
  // the page's plane as drawn before, called again (a preview may be on the canvas since)
  const text = JSON.stringify(data);
  if (text === plane.text) return;
  plane.text = text;
  plane.data = data;
  plane.basis = data.preview;
  // the clicks this plane holds (the page counts every click); the clicks made, counted
  // again from it at the first plane and once no click has been sent for 2 s (a click the
  // page never got must not keep the next clicks from asking)
  const seq = Number(data.seq) || 0;
  plane.basisSeq = seq;
  if (plane.clicks === undefined || seq > plane.clicks || performance.now() - plane.lastSent > 2000) {
    plane.clicks = seq;
  }
  plane.image = null;
  plane.pending = null;
  draw(plane);
  plane.drawn += 1;
  plane.canvas.__plane = data; // for the browser tests and the benchmark
  plane.canvas.dataset.drawn = String(plane.drawn);
  plane.canvas.dataset.seq = String(data.seq ?? "");
  plane.canvas.setAttribute("aria-label", data.title);
}
