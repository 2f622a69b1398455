package apiserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"
	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bastion-dev/bastion/internal/store"
	"github.com/bastion-dev/bastion/internal/users"
)

// maxBody bounds every JSON body; restore has its own, larger limit.
const maxBody = 1 << 20

// badRequest is a message for the user about their input (spec §5 wording
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
		return fmt.Sprintf("invalid JSON: %s must be a %s, not a %s", typeErr.Field, typeErr.Type, typeErr.Value)
	case errors.As(err, &maxErr):
		return fmt.Sprintf("the body is larger than %d bytes", maxErr.Limit)
	default:
		return "invalid JSON: " + err.Error()
	}
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
