// pgjdbc (Debian's libpostgresql-jdbc-java) against `varve serve --pg`: the driver's startup,
// DatabaseMetaData as DBeaver reads it, server-side prepared statements (binary transfer after
// prepareThreshold=5 executions), timestamptz, writes. Prints `key=value` lines; pg.rs checks them.
//
// Run: java -cp /usr/share/java/postgresql.jar JdbcClient.java PORT TOKEN
import java.sql.*;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;

public class JdbcClient {
    public static void main(String[] args) throws Exception {
        String url = "jdbc:postgresql://127.0.0.1:" + args[0] + "/varve?prepareThreshold=5";
        try (Connection c = DriverManager.getConnection(url, "dbeaver", args[1])) {
            DatabaseMetaData md = c.getMetaData();
            System.out.println("product=" + md.getDatabaseProductName() + " " + md.getDatabaseProductVersion());
            StringBuilder tables = new StringBuilder();
            try (ResultSet rs = md.getTables(null, "m", "%", new String[] {"TABLE"})) {
                while (rs.next()) tables.append(rs.getString("TABLE_SCHEM")).append('.').append(rs.getString("TABLE_NAME")).append(' ');
            }
            System.out.println("tables=" + tables.toString().trim());
            StringBuilder columns = new StringBuilder();
            try (ResultSet rs = md.getColumns(null, "m", "cpu", "%")) {
                while (rs.next()) columns.append(rs.getString("COLUMN_NAME")).append(' ');
            }
            System.out.println("columns=" + columns.toString().trim());
            try (PreparedStatement ps = c.prepareStatement("SELECT count(*) AS n, sum(v) AS s FROM m.cpu WHERE host = ? AND v > ?")) {
                StringBuilder counts = new StringBuilder();
                for (int i = 0; i < 8; i++) {
                    ps.setString(1, "h1");
                    ps.setDouble(2, i * 50.0);
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        counts.append(rs.getLong("n")).append(' ');
                    }
                }
                System.out.println("counts=" + counts.toString().trim());
            }
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT ts, v FROM m.cpu WHERE host = 'h2' ORDER BY ts LIMIT 1 OFFSET 1")) {
                rs.next();
                System.out.println("first_ts=" + rs.getObject("ts", OffsetDateTime.class).withOffsetSameInstant(ZoneOffset.UTC));
                System.out.println("first_v=" + rs.getDouble("v"));
            }
            try (PreparedStatement ins = c.prepareStatement("INSERT INTO m.cpu VALUES (?, ?, ?)")) {
                ins.setObject(1, OffsetDateTime.of(2002, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC));
                ins.setString(2, "jdbc");
                ins.setDouble(3, 9.5);
                System.out.println("inserted=" + ins.executeUpdate());
            }
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM m.cpu WHERE host = 'jdbc'")) {
                rs.next();
                System.out.println("jdbc_rows=" + rs.getLong(1));
            }
        }
    }
}
