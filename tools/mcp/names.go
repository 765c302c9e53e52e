package mcp

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/agentloop/agentloop/providers/kit"
)

// exposedName is the name a server's tool is offered under: the server's
// name and the tool's joined by "__" when prefix is set, made valid for
// the providers (letters, digits, '_' and '-', at most 64) and unique
// among the names taken so far (which it adds to).
func exposedName(server, tool string, prefix bool, taken map[string]bool) string {
	name := tool
	if prefix {
		name = server + "__" + tool
	}
	if len(name) > 64 {
		sum := sha256.Sum256([]byte(name))
		name = name[:55] + "_" + hex.EncodeToString(sum[:4])
	}
	name = kit.ToolName(name)
	for base, n := name, 2; taken[name]; n++ {
		suffix := "_" + string(rune('0'+n%10))
		if len(base)+len(suffix) > 64 {
			base = base[:64-len(suffix)]
		}
		name = base + suffix
	}
	taken[name] = true
	return name
}
