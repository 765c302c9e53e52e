package mcp

import (
	"fmt"

	"github.com/agentloop/agentloop/internal/httpx"
)

// The texts the model reads when a call of a server's tool fails on the
// way (a result flagged isError is the server's own text). Each is an
// error result of the call.

// LostText says the connection to server dropped while a call ran: the
// call is not sent again, since it may have run.
func LostText(server string) string {
	return fmt.Sprintf("the connection to %s was lost while the call was running; it may or may not have run", server)
}

// RefusedText says server answered the call with a JSON-RPC error (an
// unknown tool, arguments it refused): the call did not run. A message
// longer than httpx.MaxQuotedBytes (2 KiB) is cut to it, with a marker
// saying how long it was ("[... cut from N bytes]"): a server's message
// may be as long as Limits.MaxMessageBytes.
func RefusedText(server, message string) string {
	return fmt.Sprintf("%s refused the call: %s", server, httpx.Quote(message, ""))
}

// TooLargeText says server answered the call with a message of size
// bytes, more than limit (Limits.MaxMessageBytes): the call ran, but
// its result was dropped.
func TooLargeText(server string, size, limit int64) string {
	return fmt.Sprintf("the call ran on %s, but its result (%d bytes) is larger than the %d bytes allowed and was dropped", server, size, limit)
}

// TooDeepText says server answered the call with a result that nests
// objects and arrays more than depth levels deep: the call ran, but its
// result was dropped (the MCP SDK reads no message nested past 1000
// levels).
func TooDeepText(server string, depth int) string {
	return fmt.Sprintf("the call ran on %s, but its result nests more than %d levels deep and was dropped", server, depth)
}
