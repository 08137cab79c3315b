/** The instrumentation scope of jwt-grpc's spans (the tracer name a backend groups them by). */
export const TRACER_NAME = 'jwt-grpc';
