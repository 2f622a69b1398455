package controllers

// WriteStatus is writeStatus, for the suite's tests.
var WriteStatus = writeStatus
