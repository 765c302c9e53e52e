package mcp

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

var providerName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// TestNamesCollide: any number of tools whose names become the same
// (punctuation made '_', long names cut, names like the suffixed ones,
// empty names) get distinct valid names, the same on every build.
func TestNamesCollide(t *testing.T) {
	long := strings.Repeat("a", 70)
	var punct []string
	for _, c := range "!\"#$%&'()*+,./:;<=>?@[\\]^`{|}~" {
		punct = append(punct, "x"+string(c))
	}
	var many []string
	for range 3000 {
		many = append(many, "same")
	}
	tests := []struct {
		name   string
		prefix bool
		tools  []string
	}{
		{"twelve punctuations", false, punct[:12]},
		{"every punctuation", true, punct},
		{"thousands alike", false, many},
		{"alike and suffixed alike", false, []string{"x_", "x!", "x_2", "x?", "x_3", "x_2", "x.", "x_4"}},
		{"long", false, []string{long, long, long + "b", long, long[:62] + "_2", long[:63]}},
		{"long with prefix", true, []string{long, long, long}},
		{"empty and unnamed", false, []string{"", "", "unnamed_tool", "unnamed_tool_2"}},
		{"multibyte", false, []string{"é", "__", "ü", "_"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			build := func() []string {
				n := newNamer(tt.prefix)
				var out []string
				for _, tool := range tt.tools {
					out = append(out, n.name(strings.Repeat("s", 40), tool))
				}
				return out
			}
			got := build()
			seen := map[string]bool{}
			for i, name := range got {
				if !providerName.MatchString(name) {
					t.Fatalf("%q → %q: not a valid name", tt.tools[i], name)
				}
				if seen[name] {
					t.Fatalf("%q → %q: given twice", tt.tools[i], name)
				}
				seen[name] = true
			}
			if again := build(); !slices.Equal(got, again) {
				t.Fatalf("not deterministic: %v then %v", got, again)
			}
		})
	}
}

// TestNamesCollideOnRelist: a server whose tools collide in name, and
// that changes its list, keeps distinct names through the relist (which
// once looped forever under the rebuild lock, and hung Close).
func TestNamesCollideOnRelist(t *testing.T) {
	s := newTestServer()
	add := func(from, to int) {
		for i := from; i < to; i++ {
			s.add(fmt.Sprintf("x%c%d", "!?.:"[i%4], i/4), `{"type":"object"}`, ok)
		}
	}
	add(0, 40)
	changed := make(chan struct{}, 1)
	ts := connect(t, Options{OnChange: func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}}, Server{Name: "c", Dial: s.dial})
	add(40, 80)
	for {
		waitFor(t, changed, "the relist never finished")
		if set, _ := ts.Tools(); len(set) == 80 {
			break
		}
	}
	set, _ := ts.Tools()
	seen := map[string]bool{}
	for _, tl := range set {
		if seen[tl.Name()] || !providerName.MatchString(tl.Name()) {
			t.Fatalf("name %q repeated or invalid", tl.Name())
		}
		seen[tl.Name()] = true
	}
	if err := ts.Close(); err != nil {
		t.Fatal(err)
	}
}

func ok(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("ok"), nil }
