"""``tests.settings`` for a worker subprocess that traces: OpenTelemetry's SDK writes every
span it ends to the file ``WORKFLOW_TRACES_FILE`` names, one JSON object a line
(``tests/outside_the_admin/test_traces.py`` reads them; docs/traces-and-metrics.md)."""

import os

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

from tests.settings import *  # noqa: F403


class FileExporter(SpanExporter):
    """Appends each span as one line: the cluster's processes write to one file, each of
    its writes one ``write`` of whole lines."""

    def __init__(self, path: str) -> None:
        self.path = path

    def export(self, spans):
        lines = "".join(span.to_json(indent=None) + "\n" for span in spans)
        with open(self.path, "a") as output:
            output.write(lines)
        return SpanExportResult.SUCCESS


provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(FileExporter(os.environ["WORKFLOW_TRACES_FILE"])))
trace.set_tracer_provider(provider)
