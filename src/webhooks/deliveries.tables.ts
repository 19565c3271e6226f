// Tables of webhook deliveries, attempts and dead letters (filled in by the delivery engine work).
export type DeliveryTables = Record<never, never>;
