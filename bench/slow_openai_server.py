#!/usr/bin/env python3
"""A loopback OpenAI-compatible Chat Completions server that answers every
request after a fixed delay (default 50 ms), for the provider-concurrency
benchmark. One asyncio event loop, HTTP/1.1 keep-alive, no dependencies.

Usage: slow_openai_server.py PORT_FILE [DELAY_MS]
Writes the port it bound on 127.0.0.1 to PORT_FILE, serves until stdin
closes (so it stops with the script that started it), then prints how many
requests it answered and the most it held at once to stderr.
"""
import asyncio, json, os, sys

delay = (float(sys.argv[2]) if len(sys.argv) > 2 else 50.0) / 1000.0
in_flight = 0
most = 0
answered = 0


def answer(body: bytes) -> bytes:
    request = json.loads(body or b"{}")
    text = ""
    for message in request.get("messages", []):
        if message.get("role") == "user":
            content = message.get("content")
            text = content if isinstance(content, str) else json.dumps(content)
    payload = {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "model": request.get("model", "bench-model"),
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 8, "total_tokens": 20},
    }
    return json.dumps(payload).encode()


async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    global in_flight, most, answered
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            body = await reader.readexactly(length) if length else b""
            in_flight += 1
            most = max(most, in_flight)
            await asyncio.sleep(delay)
            in_flight -= 1
            out = answer(body)
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                         b"content-length: " + str(len(out)).encode() + b"\r\n\r\n" + out)
            await writer.drain()
            answered += 1
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def main() -> None:
    server = await asyncio.start_server(serve, "127.0.0.1", 0, backlog=1024)
    port = server.sockets[0].getsockname()[1]
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(str(port))
    os.replace(sys.argv[1] + ".tmp", sys.argv[1])
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)
    server.close()
    print(f"server: answered {answered} requests, at most {most} at once", file=sys.stderr)


asyncio.run(main())
