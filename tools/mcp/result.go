package mcp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/tools"
)

// result turns a server's result into a tools.Result.
func result(res *sdk.CallToolResult) tools.Result {
	var out tools.Result
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			out.Content = append(out.Content, providers.Text{Text: c.Text})
		case *sdk.ImageContent:
			out.Content = append(out.Content, providers.Image{Data: base64.StdEncoding.EncodeToString(c.Data), MIMEType: c.MIMEType})
		case *sdk.AudioContent:
			out.Content = append(out.Content, providers.Text{Text: fmt.Sprintf("[audio, %s, %d bytes]", c.MIMEType, len(c.Data))})
		case *sdk.ResourceLink:
			out.Content = append(out.Content, providers.Text{Text: fmt.Sprintf("[resource %s: %s]", c.Name, c.URI)})
		case *sdk.EmbeddedResource:
			if r := c.Resource; r != nil {
				if r.Text != "" || len(r.Blob) == 0 {
					out.Content = append(out.Content, providers.Text{Text: r.Text})
				} else {
					out.Content = append(out.Content, providers.Text{Text: fmt.Sprintf("[resource %s, %s, %d bytes]", r.URI, r.MIMEType, len(r.Blob))})
				}
			}
		}
	}
	if res.StructuredContent != nil {
		out.Details = res.StructuredContent
		if len(out.Content) == 0 {
			if b, err := json.Marshal(res.StructuredContent); err == nil {
				out.Content = append(out.Content, providers.Text{Text: string(b)})
			}
		}
	}
	return out
}
