// pgjdbc (Debian's libpostgresql-jdbc-java) against skade serve: run as
// `java -cp /usr/share/java/postgresql.jar Client.java HOST PORT`. Prints
// one line per check; TestJDBC compares them.
import java.math.BigDecimal;
import java.sql.*;

public class Client {
    public static void main(String[] args) throws Exception {
        String url = "jdbc:postgresql://" + args[0] + ":" + args[1] + "/lake?sslmode=disable";
        try (Connection c = DriverManager.getConnection(url, "jdbc", "")) {
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE orders (id BIGINT, status VARCHAR, amount DECIMAL(10,2), placed TIMESTAMP)");
                System.out.println("update " + s.executeUpdate("INSERT INTO orders VALUES (1, 'new', 10.50, TIMESTAMP '2026-01-02 03:04:05')"));
            }
            try (PreparedStatement p = c.prepareStatement("INSERT INTO orders VALUES (?, ?, ?, ?)")) {
                for (int i = 2; i <= 4; i++) {
                    p.setLong(1, i);
                    p.setString(2, i % 2 == 0 ? "paid" : "new");
                    p.setBigDecimal(3, new BigDecimal(i + ".25"));
                    p.setTimestamp(4, Timestamp.valueOf("2026-02-0" + i + " 00:00:00"));
                    p.executeUpdate();
                }
            }
            try (PreparedStatement p = c.prepareStatement("SELECT id, status, amount, placed FROM orders WHERE id >= ? ORDER BY id")) {
                p.setLong(1, 3);
                try (ResultSet rs = p.executeQuery()) {
                    while (rs.next()) {
                        System.out.println("row " + rs.getLong(1) + " " + rs.getString(2) + " " + rs.getBigDecimal(3) + " " + rs.getTimestamp(4));
                    }
                }
            }
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                s.executeUpdate("DELETE FROM orders WHERE id = 1");
            }
            c.rollback();
            c.setAutoCommit(true);
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT count(*) FROM orders")) {
                rs.next();
                System.out.println("count " + rs.getLong(1));
            }
            try (Statement s = c.createStatement()) {
                s.executeQuery("SELECT nope FROM orders");
                System.out.println("no error");
            } catch (SQLException e) {
                System.out.println("error " + e.getSQLState());
            }
            DatabaseMetaData md = c.getMetaData();
            System.out.println("product " + md.getDatabaseProductName() + " " + md.getDatabaseMajorVersion());
            try (ResultSet t = md.getTables(null, null, "%", new String[]{"TABLE"})) {
                while (t.next()) {
                    System.out.println("table " + t.getString("TABLE_SCHEM") + "." + t.getString("TABLE_NAME"));
                }
            } catch (SQLException e) {
                System.out.println("getTables " + e.getSQLState() + " " + e.getMessage());
            }
            try (ResultSet t = md.getColumns(null, null, "orders", "%")) {
                while (t.next()) {
                    System.out.println("column " + t.getString("COLUMN_NAME") + " " + t.getString("TYPE_NAME"));
                }
            } catch (SQLException e) {
                System.out.println("getColumns " + e.getSQLState() + " " + e.getMessage());
            }
        }
    }
}
