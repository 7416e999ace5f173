export * from "./logic/frame.js";
export { TunnelHub, TunnelRequestError, type TunnelResponse } from "./hub.js";
export { TunnelClient, type MemberForward, type TunnelClientOptions } from "./agent.js";
