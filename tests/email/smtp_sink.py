"""A real SMTP server for Colloquy's send_email tests, on aiosmtpd.

Usage: smtp_sink.py DIR LIFETIME_SECS

Listens on 127.0.0.1, on a port the system picks, and prints "ready PORT" once it accepts
connections. Each message it takes is written to DIR as one JSON file (the envelope, the
headers a test checks, the decoded body, the raw text), written whole and then renamed, so a
reader never sees half of one. A recipient whose local part is "bounce" is refused with 550,
as a real server refuses an unknown mailbox. It exits by itself after LIFETIME_SECS.
"""

import asyncio
import email
import email.policy
import json
import os
import sys
import time
import uuid

from aiosmtpd.smtp import SMTP


class Sink:
    def __init__(self, directory):
        self.directory = directory

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address.split("@")[0].lower() == "bounce":
            return "550 5.1.1 <%s>: mailbox unavailable" % address
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        raw = envelope.original_content or envelope.content
        message = email.message_from_bytes(raw, policy=email.policy.default)
        record = {
            "mail_from": envelope.mail_from,
            "rcpt_tos": envelope.rcpt_tos,
            "from": message["From"],
            "to": message["To"],
            "cc": message["Cc"],
            "bcc": message["Bcc"],
            "subject": message["Subject"],
            "content_type": message.get_content_type(),
            "body": message.get_content(),
            "raw": raw.decode("utf-8", "replace"),
        }
        name = "%d-%s.json" % (time.time_ns(), uuid.uuid4().hex)
        partial = os.path.join(self.directory, "." + name)
        with open(partial, "w", encoding="utf-8") as out:
            json.dump(record, out)
        os.rename(partial, os.path.join(self.directory, name))
        return "250 Message accepted for delivery"


async def serve(directory, lifetime):
    loop = asyncio.get_running_loop()
    handler = Sink(directory)
    server = await loop.create_server(lambda: SMTP(handler), host="127.0.0.1", port=0)
    port = server.sockets[0].getsockname()[1]
    print("ready %d" % port, flush=True)
    await asyncio.sleep(lifetime)
    server.close()


def main():
    directory, lifetime = sys.argv[1], float(sys.argv[2])
    asyncio.run(serve(directory, lifetime))


if __name__ == "__main__":
    main()
