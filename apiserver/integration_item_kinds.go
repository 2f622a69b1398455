package apiserver

import (
	"strings"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
	"github.com/bastion-dev/bastion/internal/ids"
)

// The two item lists of an integration, their JSON shapes
// (api-contract.md) and their docs/features.md §5 rules.

const (
	sourceBody   = "body"
	sourceHeader = "header"
	dataJSON     = "json"
	dataString   = "string"
)

// matcherJSON is a matcher: one condition an incoming request must meet.
type matcherJSON struct {
	ID            int64  `json:"id"`
	IntegrationID int64  `json:"integration_id"`
	Name          string `json:"name"`
	MatchType     string `json:"match_type"`
	Method        string `json:"method"`
	BodyDataType  string `json:"body_data_type"`
	Key           string `json:"key"`
	Value         string `json:"value"`
}

type matcherRequest struct {
	matcherJSON
}

func (req *matcherRequest) ids() (int64, int64) { return req.ID, req.IntegrationID }

// item checks the matcher as docs/features.md §5 says: name, match type, key, method
// and value required, and a body data type when matching on the body.
func (req *matcherRequest) item() (bastionv1.IntegrationMatcher, error) {
	m := bastionv1.IntegrationMatcher{
		Name: strings.TrimSpace(req.Name), MatchType: req.MatchType, Method: req.Method,
		BodyDataType: req.BodyDataType, Key: strings.TrimSpace(req.Key), Value: req.Value,
	}
	switch {
	case m.Name == "":
		return m, badRequest("Name is required")
	case m.MatchType == "":
		return m, badRequest("Match type is required")
	case m.Key == "":
		return m, badRequest("Key is required")
	case m.Method == "":
		return m, badRequest("Method is required")
	case m.Value == "":
		return m, badRequest("Value is required")
	}
	if err := oneOf("method", m.Method, "equals", "unequals", "contains"); err != nil {
		return m, err
	}
	body, err := bodyDataType("match_type", m.MatchType, m.BodyDataType)
	m.BodyDataType = body
	return m, err
}

// bodyDataType checks the source and the body data type that goes with
// it: required for the body, meaningless (and dropped) for a header.
func bodyDataType(field, source, dataType string) (string, error) {
	if err := oneOf(field, source, sourceBody, sourceHeader); err != nil {
		return "", err
	}
	if source == sourceHeader {
		return "", nil
	}
	if dataType == "" {
		return "", badRequest("Body data type is required")
	}
	return dataType, oneOf("body_data_type", dataType, dataJSON, dataString)
}

func oneOf(field, value string, allowed ...string) error {
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	last := len(allowed) - 1
	return invalidf("%s must be %s or %s, not %q", field, strings.Join(allowed[:last], ", "), allowed[last], value)
}

var matcherItems = itemKind[bastionv1.IntegrationMatcher]{
	noun: "matcher", counter: ids.CounterIntegrationMatcher,
	list: func(s *bastionv1.IntegrationSpec) *[]bastionv1.IntegrationMatcher { return &s.Matchers },
	id:   func(m *bastionv1.IntegrationMatcher) *int64 { return &m.ID },
	name: func(m *bastionv1.IntegrationMatcher) string { return m.Name },
	toJSON: func(integrationID int64, m *bastionv1.IntegrationMatcher) any {
		return matcherJSON{ID: m.ID, IntegrationID: integrationID, Name: m.Name, MatchType: m.MatchType,
			Method: m.Method, BodyDataType: m.BodyDataType, Key: m.Key, Value: m.Value}
	},
	newRequest: func() itemRequest[bastionv1.IntegrationMatcher] { return &matcherRequest{} },
}

// valueJSON is an extracted value: a part of an incoming request that
// becomes a variable of the task it starts.
type valueJSON struct {
	ID            int64  `json:"id"`
	IntegrationID int64  `json:"integration_id"`
	Name          string `json:"name"`
	ValueSource   string `json:"value_source"`
	BodyDataType  string `json:"body_data_type"`
	Key           string `json:"key"`
	Variable      string `json:"variable"`
}

type valueRequest struct {
	valueJSON
}

func (req *valueRequest) ids() (int64, int64) { return req.ID, req.IntegrationID }

// item checks the value as docs/features.md §5 says: name, value source, key and
// variable required, and a body data type when the source is the body.
func (req *valueRequest) item() (bastionv1.IntegrationExtractValue, error) {
	v := bastionv1.IntegrationExtractValue{
		Name: strings.TrimSpace(req.Name), ValueSource: req.ValueSource, BodyDataType: req.BodyDataType,
		Key: strings.TrimSpace(req.Key), Variable: strings.TrimSpace(req.Variable),
	}
	switch {
	case v.Name == "":
		return v, badRequest("Name is required")
	case v.ValueSource == "":
		return v, badRequest("Value source is required")
	case v.Key == "":
		return v, badRequest("Key is required")
	case v.Variable == "":
		return v, badRequest("Variable is required")
	}
	body, err := bodyDataType("value_source", v.ValueSource, v.BodyDataType)
	v.BodyDataType = body
	return v, err
}

var valueItems = itemKind[bastionv1.IntegrationExtractValue]{
	noun: "extracted value", counter: ids.CounterIntegrationValue,
	list: func(s *bastionv1.IntegrationSpec) *[]bastionv1.IntegrationExtractValue { return &s.ExtractValues },
	id:   func(v *bastionv1.IntegrationExtractValue) *int64 { return &v.ID },
	name: func(v *bastionv1.IntegrationExtractValue) string { return v.Name },
	toJSON: func(integrationID int64, v *bastionv1.IntegrationExtractValue) any {
		return valueJSON{ID: v.ID, IntegrationID: integrationID, Name: v.Name, ValueSource: v.ValueSource,
			BodyDataType: v.BodyDataType, Key: v.Key, Variable: v.Variable}
	},
	newRequest: func() itemRequest[bastionv1.IntegrationExtractValue] { return &valueRequest{} },
}
