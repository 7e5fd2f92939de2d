package server

import (
	"net/http"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/registry"
)

// UpstreamList answers GET /v1/upstreams.
type UpstreamList struct {
	Upstreams []engine.UpstreamStatus `json:"upstreams"`
}

// QuarantineList answers GET /v1/quarantine.
type QuarantineList struct {
	Items []engine.QuarantineItem `json:"items"`
}

// QuarantineDecision is the body of POST /v1/quarantine/approve and /reject.
type QuarantineDecision struct {
	ResourceID string `json:"resource_id"`
}

// QuarantineResult answers an approval or a rejection.
type QuarantineResult struct {
	ResourceID string `json:"resource_id"`
	Decision   string `json:"decision"`
	Generation uint64 `json:"generation"`
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

func (s *Server) handleQuarantine(w http.ResponseWriter, r *http.Request) {
	items, err := s.eng.Quarantined()
	if err != nil {
		writeEngineError(w, r, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, QuarantineList{Items: items})
}

func (s *Server) handleApprove(w http.ResponseWriter, r *http.Request) { s.decide(w, r, true) }
func (s *Server) handleReject(w http.ResponseWriter, r *http.Request)  { s.decide(w, r, false) }

func (s *Server) decide(w http.ResponseWriter, r *http.Request, approve bool) {
	var req QuarantineDecision
	if !decodeBody(w, r, &req) {
		return
	}
	if !registry.ValidID(req.ResourceID) {
		writeError(w, r, http.StatusBadRequest, "invalid_request", "resource_id: want the id of a quarantined tool (GET /v1/quarantine lists them)")
		return
	}
	_, c := rcOf(r)
	actor := c.Tenant + "/" + c.User
	var err error
	decision := engine.DecisionApproved
	if approve {
		err = s.eng.ApproveQuarantined(r.Context(), req.ResourceID, actor)
	} else {
		decision = engine.DecisionRejected
		err = s.eng.RejectQuarantined(r.Context(), req.ResourceID, actor)
	}
	if err != nil {
		writeEngineError(w, r, s.log, err)
		return
	}
	s.m.generation.Set(float64(s.eng.Generation()))
	writeJSON(w, http.StatusOK, QuarantineResult{ResourceID: req.ResourceID, Decision: decision, Generation: s.eng.Generation()})
}
