package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/agentloop/agentloop/providers/kit"
)

// maxName is the longest tool name the providers accept.
const maxName = 64

// namer gives the tools of one tool set their exposed names, distinct and
// valid for the providers, in the order it is asked: the same listings
// give the same names.
type namer struct {
	prefix bool            // names carry their server's
	taken  map[string]bool // names given so far
	next   map[string]int  // for a name taken, the next suffix to try
}

func newNamer(prefix bool) *namer {
	return &namer{prefix: prefix, taken: map[string]bool{}, next: map[string]int{}}
}

// name is the name a server's tool is offered under: the server's name
// and the tool's joined by "__" when prefixing, made valid for the
// providers (letters, digits, '_' and '-', at most 64; a longer name keeps
// its start and a hash of the whole) and distinct from every name given
// before, by a suffix "_2", "_3", … The suffixed names of one base differ
// in their digits, and only finitely many names are taken, so the search
// ends; next makes it start where the last one for that base stopped.
func (n *namer) name(server, tool string) string {
	name := tool
	if n.prefix {
		name = server + "__" + tool
	}
	if len(name) > maxName {
		sum := sha256.Sum256([]byte(name))
		name = name[:maxName-9] + "_" + hex.EncodeToString(sum[:4])
	}
	name = kit.ToolName(name)
	if n.taken[name] {
		base := name
		for k := max(n.next[base], 2); ; k++ {
			suffix := "_" + strconv.Itoa(k)
			candidate := base[:min(len(base), maxName-len(suffix))] + suffix
			if !n.taken[candidate] {
				n.next[base] = k + 1
				name = candidate
				break
			}
		}
	}
	n.taken[name] = true
	return name
}
