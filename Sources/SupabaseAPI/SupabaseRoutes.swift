import HTTPServer

/// The Supabase-compatible surface: `/auth/v1` (GoTrue), `/rest/v1` (PostgREST), `/storage/v1` and
/// `/realtime/v1`.
public enum SupabaseRoutes {
    public static func routes(_ context: SupabaseContext) -> [Route] {
        GoTrueRoutes(context: context).routes + RestRoutes(context: context).routes
            + StorageRoutes(context: context).routes + RealtimeRoutes(context: context).routes
    }
}
