package server

import (
	"context"
	"encoding/json"
	"time"
)

// QuarantineSource is where the console's quarantine page, and GET /v1/quarantine with
// POST /v1/quarantine/approve and /reject, get the upstream changes held back for review.
// The gateway's quarantine store implements it; Options.Quarantine plugs it in. Approve and
// Reject of an id that is not waiting answer an error wrapping engine.ErrNotFound.
type QuarantineSource interface {
	Quarantined(ctx context.Context) ([]QuarantineItem, error)
	Approve(ctx context.Context, resourceID, actor string) error
	Reject(ctx context.Context, resourceID, actor string) error
}

// QuarantineItem is one upstream change waiting for an administrator.
type QuarantineItem struct {
	ResourceID string `json:"resource_id"`
	Upstream   string `json:"upstream"`
	// Reason is "changed" (a known tool's contract changed) or "new".
	Reason     string    `json:"reason"`
	DetectedAt time.Time `json:"detected_at"`
	// Old is the approved contract (nil for a new tool); New is the one held back.
	Old   *QuarantinedTool `json:"old"`
	New   *QuarantinedTool `json:"new"`
	Flags []string         `json:"flags"`
}

// QuarantinedTool is an upstream tool's contract as the upstream announced it.
type QuarantinedTool struct {
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
}
