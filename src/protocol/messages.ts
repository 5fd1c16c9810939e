// A custom LSP message as a typed descriptor: its method name with the types of its parameters (and of a
// request's result) and the side that sends it, as vscode-jsonrpc's RequestType and NotificationType
// declare theirs, but without a library import, so the protocol files stay types and plain values. Each
// side hands its own LSP connection to `typedMessages` and sends and handles messages only through the
// descriptors: a wrong parameter or result type is a type error, not a message the other side drops.

/** The side that sends a message; the other side handles it. */
export type Sender = 'client' | 'server';

/** The side that handles what `S` sends. */
export type Receiver<S extends Sender> = S extends 'client' ? 'server' : 'client';

/** A request: sent by `sender`, answered by the other side with an `R`. */
export interface RequestType<P, R, S extends Sender = Sender> {
  readonly kind: 'request';
  readonly method: string;
  readonly sender: S;
  /** Never set: it carries the parameter and result types. */
  readonly types?: { params: P; result: R };
}

/** A notification: sent by `sender`, handled by the other side, never answered. */
export interface NotificationType<P, S extends Sender = Sender> {
  readonly kind: 'notification';
  readonly method: string;
  readonly sender: S;
  /** Never set: it carries the parameter type. */
  readonly types?: { params: P };
}

export type MessageType = RequestType<unknown, unknown> | NotificationType<unknown>;

/** A request the client sends and the server answers. */
export function clientRequest<P, R>(method: string): RequestType<P, R, 'client'> {
  return { kind: 'request', method, sender: 'client' };
}

/** A notification the client sends and the server handles. */
export function clientNotification<P>(method: string): NotificationType<P, 'client'> {
  return { kind: 'notification', method, sender: 'client' };
}

/** A notification the server sends and the client handles. */
export function serverNotification<P>(method: string): NotificationType<P, 'server'> {
  return { kind: 'notification', method, sender: 'server' };
}

interface Disposable {
  dispose(): void;
}

/**
 * What vscode-languageserver's Connection and vscode-languageclient's LanguageClient both offer for
 * messages named by their method string.
 */
export interface MessageConnection {
  sendRequest(method: string, params: unknown): Promise<unknown>;
  sendNotification(method: string, params: unknown): Promise<void>;
  onRequest(method: string, handler: (...params: unknown[]) => unknown): Disposable;
  onNotification(method: string, handler: (...params: unknown[]) => void): Disposable;
}

/**
 * One side's messages typed by their descriptors (the types come from the descriptor alone): `Self` sends
 * only what it is the sender of and handles only what the other side sends.
 */
export interface TypedMessages<Self extends Sender> {
  request<P, R>(type: RequestType<P, R, Self>, params: NoInfer<P>): Promise<R>;
  notify<P>(type: NotificationType<P, Self>, params: NoInfer<P>): Promise<void>;
  onRequest<P, R>(type: RequestType<P, R, Receiver<Self>>, handler: (params: NoInfer<P>) => NoInfer<R> | Promise<NoInfer<R>>): Disposable;
  onNotification<P>(type: NotificationType<P, Receiver<Self>>, handler: (params: NoInfer<P>) => void): Disposable;
}

/**
 * The one place where a message's types meet the untyped wire: what arrives under a descriptor's method
 * is taken to be its parameters, as the other side sent them through the same descriptor.
 */
export function typedMessages<Self extends Sender>(connection: MessageConnection): TypedMessages<Self> {
  return {
    request: <P, R>(type: RequestType<P, R, Self>, params: P) => connection.sendRequest(type.method, params) as Promise<R>,
    notify: (type, params) => connection.sendNotification(type.method, params),
    onRequest: (type, handler) => connection.onRequest(type.method, handler as (...params: unknown[]) => unknown),
    onNotification: (type, handler) => connection.onNotification(type.method, handler as (...params: unknown[]) => void),
  };
}
