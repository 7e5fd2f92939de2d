package server

import (
	"context"
	"net/http"

	"github.com/capdex/capdex/engine"
)

// UpstreamList answers GET /v1/upstreams.
type UpstreamList struct {
	Upstreams []engine.UpstreamStatus `json:"upstreams"`
}

// handleUpstreams lists the upstream servers: every caller, each seeing only the servers
// whose pack it may discover (an administrator sees all, with quarantine counts).
func (s *Server) handleUpstreams(w http.ResponseWriter, r *http.Request) {
	rc, _ := rcOf(r)
	us, err := s.eng.Upstreams(rc)
	if err != nil {
		writeEngineError(w, r, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, UpstreamList{Upstreams: us})
}

// gatewayQuarantine is the engine's gateway as the QuarantineSource of GET /v1/quarantine
// and POST /v1/quarantine/approve and /reject (served from console.go).
type gatewayQuarantine struct{ s *Server }

func (q gatewayQuarantine) Quarantined(context.Context) ([]QuarantineItem, error) {
	items, err := q.s.eng.Quarantined()
	if err != nil {
		return nil, err
	}
	out := make([]QuarantineItem, 0, len(items))
	for _, it := range items {
		x := QuarantineItem{ResourceID: it.ResourceID, Upstream: it.Upstream, Reason: it.Reason, DetectedAt: it.DetectedAt,
			New:   &QuarantinedTool{Description: it.New.Description, InputSchema: it.New.InputSchema, Annotations: it.New.Annotations},
			Flags: it.Flags}
		if it.Old != nil {
			x.Old = &QuarantinedTool{Description: it.Old.Description, InputSchema: it.Old.InputSchema, Annotations: it.Old.Annotations}
		}
		out = append(out, x)
	}
	return out, nil
}

func (q gatewayQuarantine) Approve(ctx context.Context, id, actor string) error {
	err := q.s.eng.ApproveQuarantined(ctx, id, actor)
	q.s.m.generation.Set(float64(q.s.eng.Generation()))
	return err
}

func (q gatewayQuarantine) Reject(ctx context.Context, id, actor string) error {
	return q.s.eng.RejectQuarantined(ctx, id, actor)
}
