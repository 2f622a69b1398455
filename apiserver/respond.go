package apiserver

import (
	"encoding/json"
	"net/http"
)

// errorBody is the one shape of every error answer: {"error": "..."}.
type errorBody struct {
	Error string `json:"error"`
}

// respond writes v as JSON with the given status code.
func respond(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	if v != nil {
		_ = json.NewEncoder(w).Encode(v)
	}
}

// fail writes an error answer. Every error carries a body, never an empty one.
func fail(w http.ResponseWriter, code int, message string) {
	respond(w, code, errorBody{Error: message})
}
