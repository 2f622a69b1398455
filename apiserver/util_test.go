package apiserver_test

import (
	"strconv"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func clientKeyOf(obj client.Object) client.ObjectKey { return client.ObjectKeyFromObject(obj) }
