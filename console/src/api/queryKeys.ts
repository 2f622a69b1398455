// Every react-query key lives here, so invalidation and websocket cache updates
// can name exactly the data they touch.
export const queryKeys = {
  info: ['info'] as const,
};
