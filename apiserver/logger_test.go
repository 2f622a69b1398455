package apiserver_test

import (
	"io"

	"github.com/go-logr/logr"
	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// newTestLogger logs everything, at debug level, to w: the canary test
// searches it for secrets, so it must see every line a handler or a
// reconciler writes.
func newTestLogger(w io.Writer) logr.Logger {
	return zap.New(zap.WriteTo(w), zap.UseDevMode(true), zap.Level(zapcore.DebugLevel))
}
