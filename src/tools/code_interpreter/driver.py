# The code interpreter's driver: one long-lived CPython inside a container's sandbox.
#
# Colloquy starts it (`python3 -c <this file>`) inside bubblewrap and talks to it over its
# standard input and output, one JSON object per line each way. Requests:
#   {"op": "exec", "code": str, "max_output": int}  run code in the container's globals
#   {"op": "put", "path": str, "b64": str, "append": bool}
#                                                   place a file (or its next part) under /mnt/data
#   {"op": "get", "path": str, "max_bytes": int}    read a file of /mnt/data
#   {"op": "list"}                                  the files of /mnt/data
# Every answer has "ok"; an exec's has the captured output, the error if the code raised one,
# the figures matplotlib holds (PNG, base64) and the files of /mnt/data afterwards.
#
# The code runs in this process, so it can reach this driver: nothing it says is trusted by
# Colloquy, which bounds and checks every answer. The sandbox, not this file, is the wall.
import base64
import io
import json
import os
import signal
import sys
import traceback

DATA = "/mnt/data"
_proto_in = os.fdopen(os.dup(0), "r", encoding="utf-8", newline="\n")
_proto_out = os.fdopen(os.dup(1), "w", encoding="utf-8")

# What the code and anything it starts write to the file descriptors 1 and 2 lands in one
# file of the sandbox's own /tmp (a tmpfs of bounded size), read after each call.
_OUT_PATH = "/tmp/.colloquy-output"
_out_fd = os.open(_OUT_PATH, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
_null = os.open("/dev/null", os.O_RDONLY)
os.dup2(_null, 0)
os.dup2(_out_fd, 1)
os.dup2(_out_fd, 2)
os.close(_null)


class _Capped(io.TextIOBase):
    """Python-level stdout/stderr: kept up to a cap, counted beyond it."""

    def __init__(self):
        self.parts = []
        self.kept = 0
        self.dropped = 0
        self.cap = 0

    def reset(self, cap):
        self.parts, self.kept, self.dropped, self.cap = [], 0, 0, cap

    def writable(self):
        return True

    def write(self, text):
        if not isinstance(text, str):
            text = str(text)
        room = self.cap - self.kept
        if room > 0:
            piece = text[:room]
            self.parts.append(piece)
            self.kept += len(piece)
            self.dropped += len(text) - len(piece)
        else:
            self.dropped += len(text)
        return len(text)

    def flush(self):
        pass


_stdout = _Capped()
_stderr = _Capped()
sys.stdout = _stdout
sys.stderr = _stderr
_globals = {"__name__": "__main__", "__builtins__": __builtins__}


_PID = os.getpid()


def _answer(value):
    if os.getpid() != _PID:  # a process the code forked, back in this loop: it ends here
        os._exit(0)
    _proto_out.write(json.dumps(value) + "\n")
    _proto_out.flush()


def _inside(path):
    """The absolute path under /mnt/data a request names, or None."""
    full = os.path.normpath(os.path.join(DATA, path))
    if full != DATA and full.startswith(DATA + "/"):
        return full
    return None


def _files():
    found = []
    for root, dirs, names in os.walk(DATA):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in names:
            if name.startswith("."):
                continue
            full = os.path.join(root, name)
            try:
                st = os.lstat(full)
            except OSError:
                continue
            if not os.path.isfile(full) or os.path.islink(full):
                continue
            found.append({"path": full, "bytes": st.st_size, "mtime_ns": st.st_mtime_ns})
            if len(found) >= 1000:
                return found
    return found


def _figures():
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return []
    images = []
    try:
        for number in plt.get_fignums():
            figure = plt.figure(number)
            buffer = io.BytesIO()
            figure.savefig(buffer, format="png")
            images.append(base64.b64encode(buffer.getvalue()).decode("ascii"))
        plt.close("all")
    except Exception:  # a figure that cannot be drawn is left out
        pass
    return images


def _descriptor_output(cap):
    try:
        size = os.fstat(_out_fd).st_size
        os.lseek(_out_fd, 0, os.SEEK_SET)
        data = os.read(_out_fd, min(size, cap)) if size else b""
        os.ftruncate(_out_fd, 0)
        os.lseek(_out_fd, 0, os.SEEK_SET)
        return data.decode("utf-8", "replace"), max(0, size - len(data))
    except OSError:
        return "", 0


def _exec(request):
    cap = int(request.get("max_output", 65536))
    _stdout.reset(cap)
    _stderr.reset(cap)
    error = None
    try:
        code = compile(request["code"], "<code>", "exec")
        exec(code, _globals)
    except SystemExit as stop:
        error = {"ename": "SystemExit", "evalue": str(stop.code), "traceback": ""}
    except BaseException as raised:  # KeyboardInterrupt, MemoryError and the rest
        error = {
            "ename": type(raised).__name__,
            "evalue": str(raised)[:2000],
            # Without this driver's own frame: the code's frames only.
            "traceback": "".join(
                traceback.format_exception(type(raised), raised, raised.__traceback__.tb_next)
            )[-8000:],
        }
    try:
        sys.stdout.flush()
    except Exception:
        pass
    if os.getpid() != _PID:  # a process the code forked, back here: it ends at once
        os._exit(0)
    # What the call started ends with it: every other process of the sandbox's (its PID
    # namespace's init is spared by the kernel, and so is this process).
    try:
        os.kill(-1, signal.SIGKILL)
    except OSError:
        pass
    while True:  # and is reaped
        try:
            if os.waitpid(-1, 0)[0] == 0:
                break
        except ChildProcessError:
            break
    raw, raw_dropped = _descriptor_output(cap)
    return {
        "ok": True,
        "stdout": "".join(_stdout.parts),
        "stderr": "".join(_stderr.parts),
        "raw": raw,
        "dropped": _stdout.dropped + _stderr.dropped + raw_dropped,
        "error": error,
        "images": _figures(),
        "files": _files(),
    }


def _put(request):
    full = _inside(request["path"])
    if full is None:
        return {"ok": False, "error": "the path is not under /mnt/data"}
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "ab" if request.get("append") else "wb") as out:
        out.write(base64.b64decode(request["b64"]))
    return {"ok": True, "path": full}


def _get(request):
    full = _inside(request["path"])
    if full is None or os.path.islink(full) or not os.path.isfile(full):
        return {"ok": False, "error": "no such file"}
    limit = int(request.get("max_bytes", 0))
    if os.path.getsize(full) > limit:
        return {"ok": False, "error": "the file is larger than %d bytes" % limit}
    with open(full, "rb") as source:
        return {"ok": True, "b64": base64.b64encode(source.read(limit + 1)).decode("ascii")}


_OPS = {"exec": _exec, "put": _put, "get": _get, "list": lambda _: {"ok": True, "files": _files()}}

_answer({"ok": True, "ready": True})
for line in _proto_in:
    try:
        request = json.loads(line)
        answer = _OPS[request["op"]](request)
    except BaseException as failed:
        answer = {"ok": False, "error": "%s: %s" % (type(failed).__name__, failed)}
    _answer(answer)
