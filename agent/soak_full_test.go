//go:build soak

package agent

// The soak test's full size; see TestSoak.
const soakAgents, soakTurns = 1000, 50
