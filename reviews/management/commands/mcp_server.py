"""manage.py mcp_server [--host 127.0.0.1] [--port 8765]: the MCP server (SPEC §7a)."""
import uvicorn
from django.conf import settings
from django.core.management.base import BaseCommand

from reviews.mcp import CheckedBodies, build_server


class Command(BaseCommand):
    help = "Serve recall_memories, propose_memory and forget_memory to MCP hosts over streamable HTTP at /mcp."

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
        parser.add_argument("--port", type=int, default=8765, help="port to listen on (default 8765)")
        parser.add_argument(
            "--public-url",
            default="",
            help="the address hosts use to reach this server, without /mcp (default http://HOST:PORT)",
        )

    def handle(self, *args, host, port, public_url, **options):
        public_url = (public_url or f"http://{host}:{port}").rstrip("/")
        server = build_server(public_url=public_url)
        # What the API's parser refuses in a body (too large, a key given twice) is refused
        # here too, before the SDK reads it.
        app = CheckedBodies(server.streamable_http_app(host=host))
        self.stdout.write(f"MCP server at {public_url}/mcp (Authorization: Bearer <API key>)", ending="\n")
        self.stdout.flush()
        log_level = "debug" if settings.DEBUG and options["verbosity"] > 1 else "warning"
        uvicorn.run(app, host=host, port=port, log_level=log_level)
