// Package toolcheck holds the check a tool list passes before a run may
// use it, shared by package loop (at the start of every run) and package
// agent (when its options are set, so a bad list is refused early).
package toolcheck

import (
	"fmt"

	"github.com/agentloop/agentloop/tools"
)

// Check reports the first tool of ts that a run would refuse: a nil or
// zero Tool, or a second tool of the same name. The error has no package
// prefix; the caller adds its own.
func Check(ts []*tools.Tool) error {
	seen := make(map[string]bool, len(ts))
	for i, t := range ts {
		if err := t.Err(); err != nil {
			return fmt.Errorf("tool %d: %w", i, err)
		}
		if seen[t.Name()] {
			return fmt.Errorf("two tools are named %q", t.Name())
		}
		seen[t.Name()] = true
	}
	return nil
}
