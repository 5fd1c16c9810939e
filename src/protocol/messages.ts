// A custom LSP message as a typed descriptor: its method name with the types of its parameters (and of a
// request's result) and the side that sends it, as vscode-jsonrpc's RequestType and NotificationType
// declare theirs, but without a library import, so the protocol files stay types and plain values. Each
// side hands its own LSP connection to `typedMessages` and sends and handles messages only through the
// descriptors: a wrong parameter or result type is a type error, not a message the other side drops.

/** The side that sends a message; the other side handles it. */
export type Sender = 'client' | 'server';

/** A request: sent by `sender`, answered by the other side with an `R`. */
export interface RequestType<P, R> {
  readonly kind: 'request';
  readonly method: string;
  readonly sender: Sender;
  /** Never set: it carries the parameter and result types. */
  readonly types?: { params: P; result: R };
}

/** A notification: sent by `sender`, handled by the other side, never answered. */
export interface NotificationType<P> {
  readonly kind: 'notification';
  readonly method: string;
  readonly sender: Sender;
  /** Never set: it carries the parameter type. */
  readonly types?: { params: P };
}

export type MessageType = RequestType<unknown, unknown> | NotificationType<unknown>;

export function request<P, R>(method: string, sender: Sender): RequestType<P, R> {
  return { kind: 'request', method, sender };
}

export function notification<P>(method: string, sender: Sender): NotificationType<P> {
  return { kind: 'notification', method, sender };
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

/** A connection's messages typed by their descriptors (the types come from the descriptor alone). */
export interface TypedMessages {
  request<P, R>(type: RequestType<P, R>, params: NoInfer<P>): Promise<R>;
  notify<P>(type: NotificationType<P>, params: NoInfer<P>): Promise<void>;
  onRequest<P, R>(type: RequestType<P, R>, handler: (params: NoInfer<P>) => NoInfer<R> | Promise<NoInfer<R>>): Disposable;
  onNotification<P>(type: NotificationType<P>, handler: (params: NoInfer<P>) => void): Disposable;
}

/**
 * The one place where a message's types meet the untyped wire: what arrives under a descriptor's method
 * is taken to be its parameters, as the other side sent them through the same descriptor.
 */
export function typedMessages(connection: MessageConnection): TypedMessages {
  return {
    request: <P, R>(type: RequestType<P, R>, params: P) => connection.sendRequest(type.method, params) as Promise<R>,
    notify: (type, params) => connection.sendNotification(type.method, params),
    onRequest: (type, handler) => connection.onRequest(type.method, handler as (...params: unknown[]) => unknown),
    onNotification: (type, handler) => connection.onNotification(type.method, handler as (...params: unknown[]) => void),
  };
}
