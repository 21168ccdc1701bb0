"""PostToolUse output transforms: strict secret masking of what a tool returns.

The tool's response keeps its own shape (an agent ignores a replacement that
does not fit, and the original then reaches the model — measured with Claude
Code 2.1.328): every string in it, object keys included, is masked as an MCP
server's message is (tcg.mcp.mask_response: placeholders ``<SECRET:rule:h8>``
identical to every other surface, base64 blobs and runs decoded and scanned).
"""

from __future__ import annotations

from tcg.agents.base import HookContext, OutputChange, OutputTransform, ToolCall


class MaskSecrets(OutputTransform):
    name = "mask-secrets"

    def transform(self, ctx: HookContext, call: ToolCall, response: object) -> OutputChange:
        if response is None or isinstance(response, (bool, int, float)):
            return OutputChange(response)
        from tcg.detect.engine import load_detector
        from tcg.keyhash import KeyedHasher
        from tcg.mcp.mask_response import ResponseMasker

        masker = ResponseMasker(load_detector(ctx.policy), KeyedHasher.for_install())
        # A one-key wrapper: mask_message leaves JSON-RPC envelope keys (id, method) alone,
        # and a tool's response may well have fields with those names.
        wrapped = {"response": response}
        masked, stats = masker.mask_message(wrapped)
        if masked is wrapped or not stats.spans:
            return OutputChange(response)
        return OutputChange(masked["response"], set(stats.rules), stats.spans)
