// Server-sent events over fetch (the chat API's streams answer POSTs, which EventSource
// cannot send). `SseDecoder` is the line protocol of the HTML standard as a pure function of
// the text received, so chunk boundaries anywhere (inside a line, between \r and \n) are fine.

export class SseDecoder {
  constructor() {
    this.buffer = "";
    this.skipLf = false;
    this.lastEventId = null;
    this.startFrame();
  }

  startFrame() {
    this.data = [];
    this.event = null;
  }

  /// Feeds text; returns the frames it completed: {id, event, data}.
  push(text) {
    const frames = [];
    // A \r ended the last chunk: a \n starting this one belongs to that line end.
    if (this.skipLf && text.startsWith("\n")) text = text.slice(1);
    this.skipLf = false;
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (c !== "\n" && c !== "\r") continue;
      const line = this.buffer + text.slice(start, i);
      this.buffer = "";
      if (c === "\r") {
        if (i + 1 === text.length) this.skipLf = true;
        else if (text[i + 1] === "\n") i++;
      }
      this.line(line, frames);
      start = i + 1;
    }
    this.buffer += text.slice(start);
    return frames;
  }

  line(line, frames) {
    if (line === "") {
      if (this.data.length > 0) {
        frames.push({ id: this.lastEventId, event: this.event ?? "message", data: this.data.join("\n") });
      }
      this.startFrame();
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.data.push(value);
    else if (field === "event") this.event = value;
    else if (field === "id" && !value.includes("\0")) this.lastEventId = value;
  }
}

/// Reads an SSE response body to its end, calling `onFrame` for each frame.
export async function readFrames(response, onFrame) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  const decoder = new SseDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    for (const frame of decoder.push(value)) onFrame(frame);
  }
}
