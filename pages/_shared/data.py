"""The data set every page works on: the samples, uploads, and the links that share them."""

from __future__ import annotations

import hashlib
import ipaddress
import logging
import os
import tempfile
from dataclasses import dataclass
from urllib.parse import urlencode

import streamlit as st

from pages._shared import server
from pages._shared.formatting import esc_md
from pages._shared.server import job_slot, waiting_for_worker
from pages._shared.sharing import (
    NotOwner,
    SharedDataMissing,
    StoreFull,
    StoreLimits,
    UploadStore,
)
from sblr import DataError, plots
from sblr.io import MAX_DENSE_MB as LIBRARY_DENSE_MB
from sblr.io import list_columns, load_dataset
from sblr.samples import DEFAULT_SAMPLE, load_sample

__all__ = [
    "MAX_DENSE_MB",
    "MAX_ROWS",
    "MAX_UPLOAD_MB",
    "SHARE_DAYS",
    "SHARE_MAX_MB",
    "cached_sample",
    "cached_upload",
    "current_dataset",
    "dataset_key",
    "forget_shared",
    "label_frequency_chart",
    "list_columns_cached",
    "manage_link",
    "open_shared",
    "owns_shared",
    "reads_shared",
    "share_store",
    "show_notes",
    "try_upload",
    "Upload",
    "use_sample",
]

_log = logging.getLogger("sblr.dashboard")

#: Largest upload accepted (also set as server.maxUploadSize in .streamlit/config.toml).
MAX_UPLOAD_MB = 50
#: Rows above which uploads are refused.  From AUTO_APPROX_ROWS (20,000) training rows on the
#: models use approximate (Nystroem) evidence, O(n D d) instead of O(n^2 d); see approx_notice.
MAX_ROWS = 200_000
#: Largest matrix an upload may make (MB, dense at 8 bytes a value), a quarter of the
#: library's sblr.io.MAX_DENSE_MB: the pages keep scaled copies of it, and a server has many
#: users. A 26 MB CSV of 64 text columns one-hot encoded to 1.95 GB and took the server to
#: 6.2 GB (found by an audit).
MAX_DENSE_MB = LIBRARY_DENSE_MB // 4  # 512
#: Shared links keep their data this many days (env ``SBLR_SHARE_DAYS``).
SHARE_DAYS = float(os.environ.get("SBLR_SHARE_DAYS", "7"))
#: Links one person (a browser: its cookie, whatever the sessions and tabs) keeps at once:
#: loading a further file removes that person's oldest link (before: every "Load this file"
#: click stored another copy, and ~41 clicks on a 50 MB file emptied the default 2 GB store of
#: everyone's links; then the count was per session, and four reloads evicted a teacher's link).
SHARES_PER_PERSON = 3
#: All shared uploads together at most this many MB (env ``SBLR_SHARE_MAX_MB``). A full store
#: makes room by fair shares (pages._shared.sharing): the uploader's own oldest links first,
#: then the oldest unopened ones of whoever (a network address) keeps most beyond their share;
#: refusing every newcomer instead kept a full store closed for up to SHARE_DAYS (issue #44).
SHARE_MAX_MB = float(os.environ.get("SBLR_SHARE_MAX_MB", "2048"))
#: At most this many shared uploads (env ``SBLR_SHARE_MAX_ITEMS``), as SHARE_MAX_MB.
SHARE_MAX_ITEMS = int(os.environ.get("SBLR_SHARE_MAX_ITEMS", "10000"))


@st.cache_data(max_entries=8, show_spinner=False)
def cached_sample(name):
    """The sample data set ``name`` (sblr.samples), loaded once per server."""
    return load_sample(name)


@dataclass(frozen=True)
class Upload:
    """A file as the user gave it and how to read it: its bytes, its name, a Mulan XML label
    file, the number of trailing label columns, the target column (a name, or a tuple of
    label names) and the columns to drop (a tuple of names), as :func:`sblr.load_dataset`
    takes them. Lists given for ``target`` and ``drop`` are kept as tuples."""

    data: bytes
    name: str
    xml: bytes | None = None
    n_labels: int | None = None
    target: object = None
    drop: tuple | None = None

    def __post_init__(self):
        if isinstance(self.target, list):
            object.__setattr__(self, "target", tuple(self.target))
        object.__setattr__(self, "drop", tuple(self.drop) if self.drop else None)

    def digest(self) -> str:
        """SHA-256 of the file and its options, each part length-prefixed: two different
        uploads (data, XML, name, options) can never share a key by moving bytes across
        parts."""
        h = hashlib.sha256()
        options = (self.name, self.n_labels, self.target) + ((self.drop,) if self.drop else ())
        xml = b"" if self.xml is None else b"x" + self.xml
        for part in (self.data, xml, repr(options).encode()):
            h.update(len(part).to_bytes(8, "big"))
            h.update(part)
        return h.hexdigest()

    def meta(self) -> dict:
        """The options as a shared link's store keeps them (JSON: lists, not tuples)."""
        target = list(self.target) if isinstance(self.target, tuple) else self.target
        meta = {"name": self.name, "n_labels": self.n_labels, "target": target}
        if self.drop:
            meta["drop"] = list(self.drop)
        return meta


@st.cache_resource(max_entries=8, show_spinner="Reading the file…")
def cached_upload(digest, _upload: Upload):
    """The loaded upload, keyed by ``digest`` (:meth:`Upload.digest`: hashing 50 MB on every
    rerun would eat the slider's time budget). Shared read-only: pages never modify a
    Dataset."""
    up = _upload
    with job_slot():
        return load_dataset(
            up.data,
            name=up.name,
            xml=up.xml,
            n_labels=up.n_labels,
            target=up.target,
            drop=list(up.drop) if up.drop else None,
            max_dense_mb=MAX_DENSE_MB,
            max_rows=MAX_ROWS,  # counted before the values are parsed
        )


@st.cache_data(max_entries=8, show_spinner=False)
def list_columns_cached(data: bytes, name: str):
    """The column names of a delimited upload (for the target and label choices)."""
    return list_columns(data, name=name)


def dataset_key():
    """A string that identifies the current data (sample name or upload hash)."""
    upload = st.session_state.get("upload")
    if upload is not None:
        return upload["key"]
    return "sample:" + st.session_state.get("sample", DEFAULT_SAMPLE)


def current_dataset():
    """The dataset every page works on (a sample until the user uploads one)."""
    upload = st.session_state.get("upload")
    if upload is not None:
        # Kept in the session: the shared cache holds only the last few uploads of the whole
        # server, and re-reading a file on a rerun would cost a job slot and time.
        return upload["dataset"]
    return cached_sample(st.session_state.get("sample", DEFAULT_SAMPLE))


@st.cache_resource
def share_store():
    """The server's store of uploads behind ``?data=<id>`` links (pages._shared.sharing):
    ``SBLR_SHARE_DIR`` (a folder, or an fsspec URL that replicas of the dashboard share),
    else a folder per account in the temporary directory."""

    # one folder per account: another account's folder of the same name is refused
    owner = f"-{os.getuid()}" if hasattr(os, "getuid") else ""
    root = os.environ.get("SBLR_SHARE_DIR") or os.path.join(
        tempfile.gettempdir(), f"sblr-shared-uploads{owner}"
    )
    try:
        return UploadStore(
            root,
            StoreLimits(
                max_item_mb=MAX_UPLOAD_MB + 10,
                max_total_mb=SHARE_MAX_MB,
                max_items=SHARE_MAX_ITEMS,
                ttl_seconds=SHARE_DAYS * 86400,
                max_per_person=SHARES_PER_PERSON,
                evict="fair",
            ),
        )
    except (OSError, ValueError, ImportError) as exc:
        # an unusable SBLR_SHARE_DIR (unknown protocol, a path under /proc, a file system
        # whose package is missing): uploads work, without links; said once in the log
        _log.error("SBLR_SHARE_DIR %r cannot hold data links (%s); uploads get no link", root, exc)
        return None


def _share(upload: Upload, digest: str):
    """Keep an upload in the share store: ``(id, owner key, None)``, or ``(None, None,
    reason)`` if the store cannot take it.

    The same bytes and options loaded again in this session keep their link (no second
    copy); one person (:func:`person`) holds at most ``SHARES_PER_PERSON`` links, their oldest
    removed first; a full store makes room by fair shares among network addresses
    (:func:`holder`), and refuses the link only when this upload would take more than its
    address's share while every other address keeps within its own.
    """

    mine = st.session_state.setdefault("_my_shares", [])  # [(digest, id, owner key)], oldest first
    store = share_store()
    if store is None:  # no usable store: this upload has no link
        return None, None, "this server keeps no links"
    for i, (d, token, owner_key) in enumerate(mine):
        if d == digest:
            del mine[i]
            if store.expires_at(token) is not None:  # still there: the same link again
                mine.append((d, token, owner_key))
                return token, owner_key, None
            break
    parts = {"data": upload.data} | ({} if upload.xml is None else {"xml": upload.xml})
    try:
        token, owner_key = store.put(parts, upload.meta(), person=person(), holder=holder())
    except StoreFull as exc:
        return None, None, str(exc)
    except (DataError, OSError):
        _log.exception("could not keep an upload for a shared link")
        return None, None, "the server could not keep it"
    mine.append((digest, token, owner_key))
    del mine[:-SHARES_PER_PERSON]  # the store removed the person's older ones
    return token, owner_key, None


def person() -> str:
    """Whom an upload's link counts for: a digest of the browser's cookie (every session and
    tab of one browser), else of the session."""

    return hashlib.sha256(repr(server.current_user()).encode()).hexdigest()


def holder() -> str:
    """Whose fair share of the share store an upload counts in: a digest of the network
    address it came from (:func:`server.current_address`: behind trusted proxies, the
    client's), an IPv6 address by its /64 prefix (the addresses one connection may choose
    from). A new cookie is a new person, never a new holder."""

    address = str(server.current_address())
    try:
        ip = ipaddress.ip_address(address.strip("[]"))
    except ValueError:  # "local", a proxy's own text: as it is
        key = address
    else:
        key = str(ipaddress.ip_network(f"{ip}/64", strict=False)) if ip.version == 6 else str(ip)
    return hashlib.sha256(key.encode()).hexdigest()


def open_shared(token, owner_key=None):
    """Load the data of a ``?data=<id>`` link into the session; the reason for the user if it
    cannot be (expired, unknown, or no longer loading), else None.

    ``owner_key`` (from the private manage link) makes the session the data's owner when it
    is the key the store gave the uploader; otherwise the session only reads it.
    """

    store = share_store()
    if store is None:
        return (
            "This server keeps no shared data (its store is not usable); the link's data is "
            "not open."
        )
    try:
        parts, meta = store.get(token)
    except SharedDataMissing as exc:
        return str(exc)
    except OSError:  # the store itself cannot be read (refused, disk): say so, never crash
        _log.exception("could not read the share store")
        return "This server cannot read its store of shared data now; the link's data is not open."
    up = Upload(
        parts["data"],
        meta["name"],
        parts.get("xml"),
        meta.get("n_labels"),
        meta.get("target"),
        meta.get("drop"),
    )
    error = try_upload(up, share=token)
    if error is not None:
        return f"This link's data no longer loads: {error}"
    upload = st.session_state["upload"]
    if owner_key is not None and store.is_owner(token, owner_key):
        upload["owner_key"] = owner_key
    upload["expires"] = store.expires_at(token)
    return None


def manage_link(token, owner_key, base_url=None) -> str:
    """The owner's private link: the data's link plus its owner key (``manage=``), which the
    page takes out of the address bar as soon as it is read."""

    base = (base_url or "").split("?")[0]
    return f"{base}?{urlencode({'data': token, 'manage': owner_key})}"


def owns_shared() -> bool:
    """Whether this session may remove its data's link: it uploaded the data, or opened
    the private manage link. A session that only opened the shared link reads."""
    upload = st.session_state.get("upload")
    return bool(upload and upload.get("share_id") and upload.get("owner_key"))


def reads_shared() -> bool:
    """Whether this session works on someone else's shared data: opened from a link, without
    its owner key (read-only)."""
    upload = st.session_state.get("upload")
    return bool(upload and upload.get("share_id")) and not owns_shared()


def forget_shared():
    """Remove the session's upload from the share store (its link stops working); only the
    owner's session can (:func:`owns_shared`)."""

    upload = st.session_state.get("upload")
    if not owns_shared() or share_store() is None:
        return
    try:
        share_store().delete(upload["share_id"], upload["owner_key"])
    except NotOwner:  # cannot happen for a key the store gave; never remove on doubt
        return
    mine = st.session_state.get("_my_shares", [])
    mine[:] = [m for m in mine if m[1] != upload["share_id"]]
    upload["share_id"] = None
    upload["owner_key"] = None


def size_problem(data: bytes) -> str | None:
    """Why a file is refused before it is parsed (bytes, then lines), or None: the same limits
    for every upload (data, a supplied test file, rows to predict)."""
    if len(data) > MAX_UPLOAD_MB * 2**20:
        size = len(data) / 2**20
        return f"The file is {size:.0f} MB; the dashboard accepts up to {MAX_UPLOAD_MB} MB."
    lines = data.count(b"\n") or data.count(b"\r")
    if lines > 4 * MAX_ROWS:
        # Refused before parsing: a 48 MB file of 12 million short rows took a worker 60 s
        # and 0.8 GB to read before the row limit could refuse it (found by an audit).
        # A row may span lines (quoted values), hence the margin of four lines a row.
        return (
            f"The file has {lines:,} lines, far more than the {MAX_ROWS:,} rows the dashboard "
            "accepts. Use the sblr library for larger data, or subsample."
        )
    return None


def rows_problem(n_rows: int) -> str:
    """The refusal of a file read with more than MAX_ROWS rows."""
    return (
        f"The file has {n_rows:,} rows; the dashboard accepts up to {MAX_ROWS:,} "
        "(every page refits on all rows). Use the sblr library for larger data "
        "(approximate evidence scales linearly in rows), or subsample."
    )


def try_upload(upload: Upload, share=True):
    """Load an upload; keep it only if it loads, so the previous data stays usable.

    ``share``: True keeps it in the share store under a new id (put in the URL, so a reload
    or the link brings it back); an id: it came from that link.

    Returns the error message for the user, or None on success.
    """
    problem = size_problem(upload.data)
    if problem is not None:
        return problem
    key = "upload:" + upload.digest()
    try:
        ds = waiting_for_worker(cached_upload)(key, upload)
    except DataError as exc:
        return str(exc)
    if ds.is_multilabel and ds.n_classes < 2:
        return (
            f"Only one label column ({ds.class_names[0]!r}) was found. A multi-label data set "
            "needs at least two labels; for a single 0/1 column choose it as the target of a "
            "multi-class (two-class) problem instead."
        )
    if ds.n_samples > MAX_ROWS:
        return rows_problem(ds.n_samples)
    share_id = share if isinstance(share, str) else None
    owner_key = no_link = None
    if share is True:
        share_id, owner_key, no_link = _share(upload, key)
    # The session keeps the parsed data, not the file's bytes: nothing reads them again
    # (they cost each session the file's size, each session of a link included).
    st.session_state["upload"] = {
        "name": upload.name,
        "key": key,
        "dataset": ds,
        "share_id": share_id,
        "owner_key": owner_key,
        "no_link": no_link,
        "expires": share_store().expires_at(share_id)
        if share is True and share_id and share_store() is not None
        else None,
    }
    return None


def use_sample(name):
    """Work on the sample ``name`` from now on (the upload, if any, is dropped)."""
    st.session_state.pop("upload", None)
    st.session_state["sample"] = name


def label_frequency_chart(ds):
    """The home page's bar chart of how often each class occurs."""
    st.plotly_chart(
        plots.label_frequency_bar(
            ds.label_matrix().sum(axis=0), ds.class_names, total=ds.n_samples
        ),
        key="home_frequencies",
    )


def show_notes(ds):
    """What the loader did to the file: its warnings shown, every note in an expander."""
    for note in ds.notes:
        if note.startswith("Warning:"):  # the loader's loud notes: shown, not folded away
            st.warning(esc_md(note))
    if ds.notes:
        label = "note" if len(ds.notes) == 1 else "notes"
        with st.expander(f"What the loader did ({len(ds.notes)} {label})"):
            for note in ds.notes:
                st.markdown(f"- {esc_md(note)}")
