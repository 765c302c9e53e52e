module github.com/agentloop/agentloop

go 1.26.0

require (
	github.com/chromedp/chromedp v0.23.1
	github.com/google/jsonschema-go v0.4.3
	github.com/invopop/jsonschema v0.14.0
	github.com/sashabaranov/go-openai v1.43.0
	go.uber.org/goleak v1.3.0
	golang.org/x/sync v0.25.0
)

require (
	github.com/bahlo/generic-list-go v0.2.0 // indirect
	github.com/buger/jsonparser v1.1.2 // indirect
	github.com/chromedp/cdproto v0.160.1 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/pb33f/ordered-map/v2 v2.3.1 // indirect
	go.yaml.in/yaml/v4 v4.0.0-rc.2 // indirect
)
