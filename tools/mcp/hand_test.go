package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// handDial returns a Dial for a server that speaks MCP by hand over an
// in-memory pipe, newline-delimited JSON-RPC: it answers initialize
// itself and gives every other message to handle, which answers with
// send (a whole JSON-RPC message per call). The server's goroutine ends
// when the client closes the pipe.
func handDial(handle func(send func(string), method string, id json.RawMessage)) func(context.Context) (sdk.Transport, error) {
	return func(context.Context) (sdk.Transport, error) {
		client, server := net.Pipe()
		go func() {
			defer server.Close()
			send := func(msg string) { _, _ = fmt.Fprintln(server, msg) }
			in := bufio.NewScanner(server)
			in.Buffer(nil, 1<<20)
			for in.Scan() {
				var m struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
				}
				if json.Unmarshal(in.Bytes(), &m) != nil {
					return
				}
				if m.Method == "initialize" {
					send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"hand","version":"1"}}}`, m.ID))
					continue
				}
				handle(send, m.Method, m.ID)
			}
		}()
		return &sdk.IOTransport{Reader: client, Writer: client}, nil
	}
}

// TestMain also plays stdio servers, when the tests start this binary
// as one (MCP_TEST_SERVER): "big" answers tool "big" with a text of
// the size asked, "small" with "ok" and "deep" with a result nested 2,000
// levels deep; "die" says why on its standard
// error and exits with status 3 before a word of MCP; "dielist" does so
// (status 4) when asked for its tools.
func TestMain(m *testing.M) {
	switch os.Getenv("MCP_TEST_SERVER") {
	case "":
		os.Exit(m.Run())
	case "die":
		fmt.Fprintln(os.Stderr, "starting up")
		fmt.Fprintln(os.Stderr, "fatal: no configuration at /etc/demo.conf")
		os.Exit(3)
	case "dielist": // answers initialize, dies when asked for its tools
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			_ = json.Unmarshal(in.Bytes(), &m)
			switch m.Method {
			case "initialize":
				fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"d","version":"1"}}}`+"\n", m.ID)
			case "tools/list":
				fmt.Fprintln(os.Stderr, "fatal: lost the database")
				os.Exit(4)
			default:
				if m.ID != nil {
					fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", m.ID)
				}
			}
		}
		os.Exit(0)
	case "big":
		s := sdk.NewServer(&sdk.Implementation{Name: "big", Version: "1"}, nil)
		s.AddTool(&sdk.Tool{Name: "big", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)},
			func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				var in struct{ N int }
				_ = json.Unmarshal(req.Params.Arguments, &in)
				return text(strings.Repeat("z", in.N)), nil
			})
		s.AddTool(&sdk.Tool{Name: "small", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("ok"), nil })
		s.AddTool(&sdk.Tool{Name: "deep", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				r := text("deep")
				r.StructuredContent = json.RawMessage(strings.Repeat("[", 2000) + strings.Repeat("]", 2000))
				return r, nil
			})
		_ = s.Run(context.Background(), &sdk.StdioTransport{})
		os.Exit(0)
	}
	os.Exit(2)
}

// selfServer is this test binary as the stdio server named by mode.
func selfServer(t testing.TB, mode string) Server {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Server{Name: mode, Command: exe, Env: append(os.Environ(), "MCP_TEST_SERVER="+mode)}
}
