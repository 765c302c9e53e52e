package agent

// Version is the version of the agentloop module this program was built
// with. agentloop is pre-release: no version is tagged and the module is
// not published, so "go get github.com/agentloop/agentloop@latest" does not
// resolve yet; a program uses a clone through a replace directive (the
// README shows how). Until the first tag, v0.1.0, Version carries the "-dev"
// suffix and the API may change between commits.
const Version = "v0.1.0-dev"
