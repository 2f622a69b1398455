package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bastion-dev/bastion/internal/store"
	"github.com/bastion-dev/bastion/internal/users"
)

// maxBody bounds every JSON body; restore has its own, larger limit.
const maxBody = 1 << 20

// badRequest is a message for the user about their input (docs/features.md §5 wording
// where the spec has one). It answers 400 as it is.
type badRequest string

func (e badRequest) Error() string { return string(e) }

// statusError answers a fixed status with a message.
type statusError struct {
	code int
	msg  string
}

func (e *statusError) Error() string { return e.msg }

func notFound(what string) error             { return &statusError{http.StatusNotFound, what + " not found"} }
func forbidden(msg string) error             { return &statusError{http.StatusForbidden, msg} }
func conflict(msg string) error              { return &statusError{http.StatusConflict, msg} }
func invalidf(format string, a ...any) error { return badRequest(fmt.Sprintf(format, a...)) }

// decode reads a JSON body into v. It answers 400 itself and returns false
// when the body is not JSON of the right shape.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	if err := dec.Decode(v); err != nil {
		fail(w, http.StatusBadRequest, describeJSONError(err))
		return false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		fail(w, http.StatusBadRequest, "invalid JSON: more than one value in the body")
		return false
	}
	return true
}

// describeJSONError says what is wrong with a body without echoing it.
func describeJSONError(err error) string {
	var typeErr *json.UnmarshalTypeError
	var maxErr *http.MaxBytesError
	switch {
	case errors.Is(err, io.EOF):
		return "invalid JSON: the body is empty"
	case errors.As(err, &typeErr):
		return describeTypeError(typeErr)
	case errors.As(err, &maxErr):
		return fmt.Sprintf("the body is larger than %d bytes", maxErr.Limit)
	default:
		return "invalid JSON: " + err.Error()
	}
}

// describeTypeError names the field and the JSON kinds. The value itself
// is left out: for a number Go's error carries its digits, and the field
// may be a password or a secret. Go type names are left out too.
func describeTypeError(e *json.UnmarshalTypeError) string {
	got, _, _ := strings.Cut(e.Value, " ") // "number 123" -> "number"
	if got == "bool" {
		got = "boolean"
	}
	want := jsonKind(e.Type)
	var field []string
	for _, part := range strings.Split(e.Field, ".") {
		// Embedded request structs (matcherJSON in matcherRequest) show up
		// in the path under their Go name; the client never sent those.
		if part != "" && !strings.HasSuffix(part, "JSON") {
			field = append(field, part)
		}
	}
	switch {
	case len(field) > 0:
		return fmt.Sprintf("invalid JSON: %s must be %s, not %s", strings.Join(field, "."), withArticle(want), withArticle(got))
	case want == "object":
		return fmt.Sprintf("invalid JSON: the body must be a JSON object, not %s", withArticle(got))
	default:
		return fmt.Sprintf("invalid JSON: a value must be %s, not %s", withArticle(want), withArticle(got))
	}
}

// jsonKind is the JSON word for what a Go type decodes from.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "whole number"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Struct, reflect.Map:
		return "object"
	default:
		return "value"
	}
}

func withArticle(word string) string {
	if strings.ContainsRune("aeiou", rune(word[0])) {
		return "an " + word
	}
	return "a " + word
}

// pathID reads an integer id from the URL; ok false has answered 400.
func pathID(w http.ResponseWriter, r *http.Request, param string) (int64, bool) {
	raw := chi.URLParam(r, param)
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id < 1 {
		fail(w, http.StatusBadRequest, fmt.Sprintf("invalid id %q: must be a positive integer", raw))
		return 0, false
	}
	return id, true
}

// failErr answers err with the right status. Errors it does not know are
// logged and answered as 500 without their text, which may name internals.
func failErr(w http.ResponseWriter, r *http.Request, err error) {
	var bad badRequest
	var st *statusError
	var valid *users.ValidationError
	switch {
	case errors.As(err, &bad):
		fail(w, http.StatusBadRequest, string(bad))
	case errors.As(err, &st):
		fail(w, st.code, st.msg)
	case errors.As(err, &valid):
		fail(w, http.StatusBadRequest, valid.Message)
	case errors.Is(err, users.ErrTaken):
		fail(w, http.StatusConflict, err.Error())
	case errors.Is(err, users.ErrNotFound), errors.Is(err, store.ErrNotFound), apierrors.IsNotFound(err):
		fail(w, http.StatusNotFound, "not found")
	case apierrors.IsConflict(err):
		fail(w, http.StatusConflict, "the object was changed by someone else; reload and try again")
	case errors.Is(err, context.DeadlineExceeded) && r.Context().Err() == nil:
		// A call inside the request ran out of time (the store's bound,
		// store.Bounded), not the request itself: the server cannot
		// answer now, and a retry may succeed.
		logAPI().Error(err, "request failed", "method", r.Method, "path", r.URL.Path)
		fail(w, http.StatusServiceUnavailable, "the server could not answer in time (a store or cluster call ran out of time); try again")
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		// The apiserver's own validation (CRD schema, CEL rules): its
		// message names the field and the rule, never a secret.
		fail(w, http.StatusBadRequest, err.Error())
	default:
		logAPI().Error(err, "request failed", "method", r.Method, "path", r.URL.Path)
		fail(w, http.StatusInternalServerError, "internal error; the server log has the details")
	}
}

func logAPI() logr.Logger { return ctrl.Log.WithName("api") }
